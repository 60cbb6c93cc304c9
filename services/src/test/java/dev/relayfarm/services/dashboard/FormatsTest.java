package dev.relayfarm.services.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** How the dashboard writes costs, ratios, fractions and durations: three significant figures and a unit that fits, never "1.00e+03". */
class FormatsTest {
    private static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");
    private final Formats fmt = new Formats(Clock.fixed(NOW, ZoneOffset.UTC));

    @Test
    void costsInMicrosecondsMillisecondsOrSeconds() {
        assertEquals("—", fmt.us(null));
        assertEquals("0.00 µs", fmt.us(0.0));
        assertEquals("0.123 µs", fmt.us(0.1234));
        assertEquals("12.3 µs", fmt.us(12.34));
        assertEquals("999 µs", fmt.us(999.4));
        assertEquals("1.00 ms", fmt.us(999.7), "rounds up into the next unit rather than to 1.00e+03 µs");
        assertEquals("1.00 ms", fmt.us(1000.0));
        assertEquals("1.23 ms", fmt.us(1234.0));
        assertEquals("999 ms", fmt.us(999_000.0));
        assertEquals("1.00 s", fmt.us(999_999.0), "not 1.00e+03 ms");
        assertEquals("1.50 s", fmt.us(1_500_000.0), "a slow kernel: not 1.50e+03 ms");
        assertEquals("12.0 s", fmt.us(12_000_000.0));
    }

    @Test
    void ratiosAndFractions() {
        assertEquals("—", fmt.x(null));
        assertEquals("1.25×", fmt.x(1.25));
        assertEquals("0.67×", fmt.x(2.0 / 3));
        assertEquals("—", fmt.pct(null));
        assertEquals("12.5%", fmt.pct(0.125));
        assertEquals("100.0%", fmt.pct(1.0));
        assertEquals(0, fmt.width(null));
        assertEquals(0, fmt.width(-0.5));
        assertEquals(43, fmt.width(0.426));
        assertEquals(100, fmt.width(1.7), "a bar never overflows");
    }

    @Test
    void durationsAndAges() {
        assertEquals("—", fmt.duration(null));
        assertEquals("0 ms", fmt.duration(-5L), "a clock skew is not a negative duration");
        assertEquals("850 ms", fmt.duration(850L));
        assertEquals("1.0 s", fmt.duration(1000L));
        assertEquals("12.3 s", fmt.duration(12_345L));
        assertEquals("4 min 5 s", fmt.duration(245_000L));
        assertEquals("2 h 3 min", fmt.duration(7_380_000L));
        assertEquals("4 d 2 h", fmt.duration(4 * 86_400_000L + 7_300_000L));
        assertEquals("5 min 0 s ago", fmt.ago(NOW.minusSeconds(300)));
        assertEquals("—", fmt.ago(null));
        assertEquals(90_000L, fmt.between(NOW.minusSeconds(90), null), "an open interval ends now");
        assertEquals(2_000L, fmt.between(NOW.minusSeconds(90), NOW.minusSeconds(88)));
        assertEquals("2026-11-26 12:00:00 UTC", fmt.time(NOW));
        assertEquals("0123abcd", fmt.shortId("0123abcd-4567-89ab-cdef-0123456789ab"));
    }
}
