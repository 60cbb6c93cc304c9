package dev.relayfarm.tuning.measure;

import dev.relayfarm.tuning.Measurement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The timed repeats a measurement program reported: the calls per repeat it settled on and each repeat's seconds per
 * call, and the cost they make: the median (robust to a repeat a neighbour's process disturbed, unlike the mean) and
 * the coefficient of variation (sample stddev / mean: how far the repeats agree).
 */
record RepeatTimings(int number, List<Double> secondsPerCall) {
    RepeatTimings {
        secondsPerCall = List.copyOf(secondsPerCall);
    }

    /** The report in {@code output} (the program's stdout and stderr), or empty when it has no complete one. */
    static Optional<RepeatTimings> parse(String output, int expectedRepeats) {
        long number = -1;
        List<Double> repeats = new ArrayList<>();
        for (String line : output.lines().toList()) {
            try {
                if (line.startsWith(MeasurementDriver.NUMBER_LINE)) number = Long.parseLong(line.substring(MeasurementDriver.NUMBER_LINE.length()).trim());
                else if (line.startsWith(MeasurementDriver.REPEAT_LINE)) repeats.add(Double.parseDouble(line.substring(MeasurementDriver.REPEAT_LINE.length()).trim()));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }
        if (number < 1 || number > Integer.MAX_VALUE || repeats.size() != expectedRepeats) return Optional.empty();
        for (double r : repeats) if (!(r >= 0) || Double.isInfinite(r)) return Optional.empty();
        return Optional.of(new RepeatTimings((int) number, repeats));
    }

    Measurement.Cost cost() {
        double[] us = secondsPerCall.stream().mapToDouble(s -> s * 1e6).sorted().toArray();
        int n = us.length;
        double median = n % 2 == 1 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
        double mean = Arrays.stream(us).average().orElse(0);
        double cv = 0;
        if (n > 1 && mean > 0) {
            double ss = 0;
            for (double u : us) ss += (u - mean) * (u - mean);
            cv = Math.sqrt(ss / (n - 1)) / mean;
        }
        return new Measurement.Cost(median, cv, number, n);
    }
}
