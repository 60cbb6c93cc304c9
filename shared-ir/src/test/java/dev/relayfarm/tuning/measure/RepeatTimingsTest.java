package dev.relayfarm.tuning.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.tuning.Measurement;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Reading the driver's report and turning repeats into a cost: median, not mean; sample cv. */
class RepeatTimingsTest {
    @Test
    void parsesTheTaggedLinesAmongOtherOutput() {
        String out = """
                some warning on stderr
                relayfarm-number 40
                relayfarm-repeat 2.000000000e-06
                relayfarm-repeat 3.000000000e-06
                relayfarm-repeat 1.000000000e-04
                """;
        RepeatTimings t = RepeatTimings.parse(out, 3).orElseThrow();
        assertEquals(40, t.number());
        assertEquals(List.of(2e-6, 3e-6, 1e-4), t.secondsPerCall());
        Measurement.Cost c = t.cost();
        assertEquals(3.0, c.medianUs(), 1e-9, "one disturbed repeat does not move the median");
        assertEquals(40, c.number());
        assertEquals(3, c.repeat());
        // mean 35 µs, sample stddev sqrt((33² + 32² + 65²) / 2) = sqrt(3169)
        assertEquals(Math.sqrt(3169) / 35, c.cv(), 1e-9);
    }

    @Test
    void anEvenNumberOfRepeatsTakesTheMiddleTwo() {
        Measurement.Cost c = new RepeatTimings(1, List.of(4e-6, 1e-6, 2e-6, 3e-6)).cost();
        assertEquals(2.5, c.medianUs(), 1e-9);
    }

    @Test
    void oneRepeatHasNoSpread() {
        assertEquals(0.0, new RepeatTimings(1, List.of(5e-6)).cost().cv());
    }

    @Test
    void anIncompleteOrGarbledReportIsNone() {
        assertEquals(Optional.empty(), RepeatTimings.parse("relayfarm-number 4\nrelayfarm-repeat 1e-6\n", 2), "a repeat missing (killed mid-way)");
        assertEquals(Optional.empty(), RepeatTimings.parse("relayfarm-repeat 1e-6\n", 1), "no number");
        assertEquals(Optional.empty(), RepeatTimings.parse("relayfarm-number 4\nrelayfarm-repeat nan\n", 1), "not a time");
        assertEquals(Optional.empty(), RepeatTimings.parse("relayfarm-number x\nrelayfarm-repeat 1e-6\n", 1));
        assertTrue(RepeatTimings.parse("relayfarm-number 4\nrelayfarm-repeat 1e-6\n", 1).isPresent());
    }
}
