package dev.relayfarm.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

/** What is running, read from /proc: the tests' way to see that a killed child left nothing behind. */
public final class Processes {
    private Processes() {}

    /** Whether /proc exists (Linux): without it the tests that look for survivors skip. */
    public static boolean available() {
        return Files.isDirectory(Path.of("/proc/self"));
    }

    /** Running (not zombie: an orphan's zombie waits for init, which may never reap it in a container) and matching. */
    public static List<Long> live(Predicate<Proc> p) {
        List<Long> out = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(Path.of("/proc"))) {
            for (Path d : dirs.toList()) {
                String name = d.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) continue;
                Proc proc = read(Long.parseLong(name));
                if (proc != null && proc.state() != 'Z' && proc.state() != 'X' && p.test(proc)) out.add(proc.pid());
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out;
    }

    /** Live processes in process group {@code pgid}. */
    public static List<Long> inGroup(long pgid) {
        return live(p -> p.pgid() == pgid);
    }

    public static boolean alive(long pid) {
        Proc p = read(pid);
        return p != null && p.state() != 'Z' && p.state() != 'X';
    }

    /** Waits up to {@code ms} for {@code cond}; its last answer. */
    public static boolean within(long ms, java.util.function.BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + ms * 1_000_000;
        while (System.nanoTime() < end) {
            if (cond.getAsBoolean()) return true;
            Thread.sleep(20);
        }
        return cond.getAsBoolean();
    }

    public record Proc(long pid, char state, long pgid, String cmdline) {}

    static Proc read(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
            // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so parse after the last ')'
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            String cmd = new String(Files.readAllBytes(Path.of("/proc", String.valueOf(pid), "cmdline"))).replace('\0', ' ');
            return new Proc(pid, f[0].charAt(0), Long.parseLong(f[2]), cmd);
        } catch (IOException | RuntimeException e) {
            return null; // gone meanwhile
        }
    }
}
