package dev.relayfarm.services.kit;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import org.springframework.boot.convert.DurationStyle;
import java.util.Objects;

/**
 * A job's {@code tune} option: {@code off} (every kernel gets its template's default), {@code apply} (the default
 * option, the farm's stored schedules where a reviewer approved or pinned one), or {@code budget=<duration>} (also
 * tune, on the farm, the workloads that have none: the autotuner stage waits up to the budget and applies what the
 * farm found that beat the default). Durations as {@code 90s}, {@code 5m}, {@code 1h} or ISO-8601 ({@code PT90S}).
 */
public record TuneOption(Mode mode, Duration budget) {
    public enum Mode { OFF, APPLY, BUDGET }

    public static final TuneOption APPLY = new TuneOption(Mode.APPLY, null);
    /** The longest a job waits for the farm: the autotuner stage holds the job's message meanwhile (under relayfarm.stage.max-poll-interval). */
    public static final Duration MAX_BUDGET = Duration.ofMinutes(10);

    public TuneOption {
        Objects.requireNonNull(mode, "mode");
        if ((mode == Mode.BUDGET) != (budget != null)) throw new IllegalArgumentException("a budget comes with budget= and only with it");
    }

    /** The option {@code text} names; an {@link IllegalArgumentException} says what is wrong and what is accepted. */
    public static TuneOption parse(String text) {
        String t = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
        if (t.isEmpty() || t.equals("apply")) return APPLY;
        if (t.equals("off")) return new TuneOption(Mode.OFF, null);
        if (t.startsWith("budget=")) {
            Duration d = duration(t.substring("budget=".length()));
            if (d.isNegative() || d.isZero() || d.compareTo(MAX_BUDGET) > 0) {
                throw new IllegalArgumentException("tune: the budget must be above 0 and at most " + MAX_BUDGET.toMinutes() + " minutes (longer tuning: "
                        + "POST /api/v1/tuning-runs, then a job with tune=apply), got '" + text.strip() + "'");
            }
            return new TuneOption(Mode.BUDGET, d);
        }
        throw new IllegalArgumentException("tune: expected off, apply or budget=<duration> (e.g. budget=5m), got '" + text.strip() + "'");
    }

    /** A duration as Spring reads them ({@code 90s}, {@code 5m}, {@code 1h}, ISO-8601 {@code PT90S}), with a unit: "90" is refused. */
    private static Duration duration(String s) {
        try {
            if (s.matches("\\d+")) throw new IllegalArgumentException("no unit");
            return DurationStyle.detectAndParse(s);
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new IllegalArgumentException("tune: the budget '" + s + "' is not a duration with a unit (90s, 5m, 1h or PT90S)");
        }
    }

    /** The option as jobs, messages and the API write it. */
    @Override
    public String toString() {
        return switch (mode) {
            case OFF -> "off";
            case APPLY -> "apply";
            case BUDGET -> "budget=" + (budget.toNanosPart() == 0 ? budget.toSeconds() + "s" : budget.toString());
        };
    }
}
