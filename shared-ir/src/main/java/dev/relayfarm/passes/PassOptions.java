package dev.relayfarm.passes;

import dev.relayfarm.kernel.target.Target;
import java.util.Objects;
import java.util.Set;

/**
 * How a pipeline runs. A pass runs when it is not {@code disabled} and either its opt level is at
 * most {@code optLevel} or it is {@code forced} (named explicitly, e.g. {@code relayc opt --passes};
 * TVM's "required"). {@code dumpBefore}/{@code dumpAfter} name passes whose input/output module is
 * printed to the context's dump sink; {@code validate} (debug mode) checks scoping after every pass
 * and that a pass answering "unchanged" really returned its input. {@code target} is what the module is
 * optimized for: passes that choose layouts ask it (e.g. alter-op-layout's channel blocks).
 */
public record PassOptions(int optLevel, Set<String> disabled, Set<String> forced, Set<String> dumpBefore,
        Set<String> dumpAfter, boolean validate, Target target) {
    public PassOptions {
        if (!OptLevels.PIPELINE.contains(optLevel)) throw new IllegalArgumentException("opt level must be " + OptLevels.PIPELINE + ", got " + optLevel);
        disabled = Set.copyOf(disabled);
        forced = Set.copyOf(forced);
        dumpBefore = Set.copyOf(dumpBefore);
        dumpAfter = Set.copyOf(dumpAfter);
        Objects.requireNonNull(target, "target");
    }

    /** At {@code -O<optLevel>} for the machine we run on ({@link Target#host()}). */
    public static PassOptions level(int optLevel) {
        return new PassOptions(optLevel, Set.of(), Set.of(), Set.of(), Set.of(), false, Target.host());
    }

    public boolean enabled(PassInfo info) {
        return !disabled.contains(info.name()) && (info.optLevel() <= optLevel || forced.contains(info.name()));
    }

    public PassOptions withDisabled(Set<String> names) {
        return new PassOptions(optLevel, names, forced, dumpBefore, dumpAfter, validate, target);
    }

    public PassOptions withForced(Set<String> names) {
        return new PassOptions(optLevel, disabled, names, dumpBefore, dumpAfter, validate, target);
    }

    public PassOptions withDumps(Set<String> before, Set<String> after) {
        return new PassOptions(optLevel, disabled, forced, before, after, validate, target);
    }

    public PassOptions withValidate(boolean on) {
        return new PassOptions(optLevel, disabled, forced, dumpBefore, dumpAfter, on, target);
    }

    public PassOptions withTarget(Target t) {
        return new PassOptions(optLevel, disabled, forced, dumpBefore, dumpAfter, validate, t);
    }
}
