package dev.relayfarm.services.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * How the dashboard writes numbers and times, one place for every page (templates call it as {@code fmt}). Costs in
 * microseconds with three significant figures, ages relative to now, instants in UTC.
 */
public final class Formats {
    private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT).withZone(ZoneOffset.UTC);
    private final Clock clock;

    public Formats(Clock clock) {
        this.clock = clock;
    }

    /**
     * "12.3 µs", "1.23 ms", "1.50 s"; "—" for none. The unit is chosen after rounding to three figures: %g writes a
     * value that rounds up to 1000 in scientific notation ("1.00e+03 µs" for 999.7).
     */
    public String us(Double us) {
        if (us == null) return "—";
        double v = us == 0 || !Double.isFinite(us) ? us : new java.math.BigDecimal(us).round(new java.math.MathContext(3)).doubleValue();
        if (Math.abs(v) >= 1_000_000) return String.format(Locale.ROOT, "%.3g s", v / 1_000_000);
        if (Math.abs(v) >= 1000) return String.format(Locale.ROOT, "%.3g ms", v / 1000);
        return String.format(Locale.ROOT, "%.3g µs", v);
    }

    /** "1.23×"; "—" for none. */
    public String x(Double ratio) {
        return ratio == null ? "—" : String.format(Locale.ROOT, "%.2f×", ratio);
    }

    /** "12.5%" of a 0..1 fraction; "—" for none. */
    public String pct(Double fraction) {
        return fraction == null ? "—" : String.format(Locale.ROOT, "%.1f%%", fraction * 100);
    }

    /** A whole percentage for widths (0..100). */
    public long width(Double fraction) {
        return fraction == null ? 0 : Math.round(Math.max(0, Math.min(1, fraction)) * 100);
    }

    /** {@code part} as a whole percentage of {@code whole} for a bar's width, at least 1 so a bar is never invisible. */
    public long barWidth(Long part, Long whole) {
        if (part == null || whole == null || whole <= 0) return 1;
        return Math.max(1, Math.min(100, Math.round(part * 100.0 / whole)));
    }

    /** "3 s ago", "5 min ago", "2 h ago", "4 d ago". */
    public String ago(Instant at) {
        if (at == null) return "—";
        return duration(Duration.between(at, clock.instant()).toMillis()) + " ago";
    }

    /** "850 ms", "12.3 s", "4 min 5 s", "2 h 3 min". */
    public String duration(Long ms) {
        if (ms == null) return "—";
        long m = Math.max(0, ms);
        if (m < 1000) return m + " ms";
        if (m < 60_000) return String.format(Locale.ROOT, "%.1f s", m / 1000.0);
        if (m < 3_600_000) return (m / 60_000) + " min " + (m % 60_000) / 1000 + " s";
        if (m < 86_400_000) return (m / 3_600_000) + " h " + (m % 3_600_000) / 60_000 + " min";
        return (m / 86_400_000) + " d " + (m % 86_400_000) / 3_600_000 + " h";
    }

    public String time(Instant at) {
        return at == null ? "—" : UTC.format(at);
    }

    /** Milliseconds between two instants, the second one now when null. */
    public Long between(Instant from, Instant to) {
        if (from == null) return null;
        return Duration.between(from, to == null ? clock.instant() : to).toMillis();
    }

    /** A config's knobs as "a=1 b=2" (its template is shown beside it). */
    public String knobs(JsonNode config) {
        if (config == null) return "—";
        JsonNode knobs = config.has("knobs") ? config.get("knobs") : config;
        StringBuilder b = new StringBuilder();
        knobs.fields().forEachRemaining(e -> b.append(b.isEmpty() ? "" : " ").append(e.getKey()).append('=').append(e.getValue().asText()));
        return b.isEmpty() ? "(no knobs)" : b.toString();
    }

    /** The first 8 characters of an id (a UUID's first group): what a table shows, the link carries the whole. */
    public String shortId(Object id) {
        String s = String.valueOf(id);
        return s.length() > 8 ? s.substring(0, 8) : s;
    }
}
