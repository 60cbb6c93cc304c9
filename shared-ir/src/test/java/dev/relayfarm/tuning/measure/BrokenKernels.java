package dev.relayfarm.tuning.measure;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Deliberately broken candidates for the runner's tests, made by editing the generated C of a real kernel (the
 * task's default, as {@link Candidate#lower} emits it): what a buggy template or a miscompiled config would produce.
 * Each gets its own config (template {@code broken}) so the measurements are told apart.
 */
final class BrokenKernels {
    private BrokenKernels() {}

    private static ScheduleConfig label(String what) {
        return new ScheduleConfig("broken", Map.of("kind", what));
    }

    /** Every store to the first output goes 2^40 elements past its end: a write far outside any mapping. */
    static Candidate writesOutOfBounds(Candidate real) {
        String out = outputName(real);
        String src = real.kernelSource();
        String edited = src.replace(out + "[(", out + "[((int64_t) 1 << 40) + (");
        return changed(real, edited, "out-of-bounds");
    }

    /** Loops forever on entry, after forking: two spinning processes, which only killing the group stops. */
    static Candidate loopsForever(Candidate real) {
        return changed(real, atEntry(real, "fork(); for (volatile int spin = 1; spin; ) {}"), "loops-forever");
    }

    /** Adds 0.5 to every value it stores to the first output. */
    static Candidate computesWrongAnswer(Candidate real) {
        String out = outputName(real);
        Matcher m = Pattern.compile("(" + Pattern.quote(out) + "\\[[^;]*?\\]) = ").matcher(real.kernelSource());
        String edited = m.replaceAll("$1 = 0.5f + ");
        return changed(real, edited, "wrong-answer");
    }

    /** Asks for a 4 GiB intermediate on entry and fails as generated kernels do when it is refused (return -1). */
    static Candidate allocatesTooMuch(Candidate real) {
        return changed(real, atEntry(real, "void* big = rf_alloc((size_t) 1 << 32); if (big == NULL) return -1; free(big);"), "allocates-4GiB");
    }

    /** C that does not compile. */
    static Candidate doesNotCompile(Candidate real) {
        return changed(real, atEntry(real, "this is not C;"), "syntax-error");
    }

    private static String atEntry(Candidate real, String code) {
        String entry = "int32_t " + real.signature().name() + "(void* const* args) {";
        if (!real.kernelSource().contains(entry)) throw new AssertionError("no entry " + entry + " in\n" + real.kernelSource());
        return real.kernelSource().replace(entry, entry + "\n  " + code);
    }

    private static Candidate changed(Candidate real, String edited, String what) {
        if (edited.equals(real.kernelSource())) throw new AssertionError(what + ": the edit matched nothing in\n" + real.kernelSource());
        return new Candidate(real.workloadKey(), label(what), edited, real.signature());
    }

    /** The C name the kernel gives its first output ({@code float* restrict NAME = ... args[numInputs] ...}). */
    static String outputName(Candidate real) {
        int index = real.signature().numInputs();
        Matcher m = Pattern.compile("\\* restrict (\\w+) = \\([^)]*\\)__builtin_assume_aligned\\(args\\[" + index + "\\]").matcher(real.kernelSource());
        if (!m.find()) throw new AssertionError("no output parameter " + index + " in\n" + real.kernelSource());
        return m.group(1);
    }
}
