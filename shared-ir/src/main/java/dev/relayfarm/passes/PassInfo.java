package dev.relayfarm.passes;

import java.util.List;

/**
 * What a pass is, as data: its kebab-case {@code name} (the CLI flag, the disable key, the dump
 * prefix), the lowest {@code optLevel} at which a pipeline runs it, the passes it {@code requires}
 * to have run before it (resolved once when a {@link Sequential} is built), and a one-line summary
 * for {@code relayc opt --list}.
 */
public record PassInfo(String name, int optLevel, List<String> requires, String summary) {
    public PassInfo {
        if (!name.matches("[a-z][a-z0-9]*(-[a-z0-9]+)*")) throw new IllegalArgumentException("pass name must be kebab-case: " + name);
        requires = List.copyOf(requires);
    }

    public PassInfo(String name, int optLevel, String summary) {
        this(name, optLevel, List.of(), summary);
    }
}
