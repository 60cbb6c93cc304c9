package dev.relayfarm.tuning.search;

import dev.relayfarm.kernel.template.ConfigSpace;
import java.util.SplittableRandom;

/**
 * A configuration index of a space as one candidate position per knob (the mixed radix of {@link ConfigSpace#get},
 * the first knob varying slowest), and back: what crossover mixes and what a neighbour changes.
 */
final class KnobCoordinates {
    private final int[] radix;

    KnobCoordinates(ConfigSpace space) {
        radix = space.knobs().stream().mapToInt(k -> k.candidates().size()).toArray();
    }

    int knobs() {
        return radix.length;
    }

    int[] of(long index) {
        int[] c = new int[radix.length];
        for (int k = radix.length - 1; k >= 0; k--) {
            c[k] = (int) (index % radix[k]);
            index /= radix[k];
        }
        return c;
    }

    long index(int[] coordinates) {
        long i = 0;
        for (int k = 0; k < radix.length; k++) i = i * radix[k] + coordinates[k];
        return i;
    }

    /** {@code index} with one knob that has a choice moved to another of its candidates ({@code index} itself when no knob has one). */
    long neighbour(long index, SplittableRandom random) {
        int[] c = of(index);
        int choices = 0;
        for (int r : radix) if (r > 1) choices++;
        if (choices == 0) return index;
        int pick = random.nextInt(choices);
        for (int k = 0; k < radix.length; k++) {
            if (radix[k] > 1 && pick-- == 0) {
                c[k] = (c[k] + 1 + random.nextInt(radix[k] - 1)) % radix[k];
                break;
            }
        }
        return index(c);
    }

    /** Each knob moved to a random candidate with probability {@code p}. */
    void mutate(int[] c, double p, SplittableRandom random) {
        for (int k = 0; k < radix.length; k++) if (radix[k] > 1 && random.nextDouble() < p) c[k] = random.nextInt(radix[k]);
    }
}
