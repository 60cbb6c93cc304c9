package dev.relayfarm.tuning.record;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How far apart two workloads of one template are, read from their keys ({@code nn.dense(data[8,512],weight[512,512])}):
 * the keys' numbers (shapes, strides, paddings; not the digits of dtype names) in order, compared on a log scale, so a
 * layer twice as wide is about as far as one half as wide, and a batch of 8 against 16 about as far as 256 columns
 * against 512. Keys of another operator or with other numbers of fields are infinitely far. Transfer proposes the configs of the nearest workloads first: their good
 * register tiles and loop orders are the likeliest to fit (TVM's "nearest workload" transfer).
 */
public final class WorkloadDistance {
    private static final Pattern NUMBER = Pattern.compile("\\d+");
    /** Element type names ({@code float32}, {@code uint8}, {@code bfloat16}): their digits are not shapes. */
    private static final Pattern DTYPE = Pattern.compile("(?:u?int|b?float)\\d+");

    private WorkloadDistance() {}

    /** 0 for equal shapes; the sum over the keys' numbers of |ln(1 + a) − ln(1 + b)|; infinite when not comparable. */
    public static double between(String a, String b) {
        if (!operator(a).equals(operator(b))) return Double.POSITIVE_INFINITY;
        List<Long> x = numbers(a), y = numbers(b);
        if (x.size() != y.size()) return Double.POSITIVE_INFINITY;
        double d = 0;
        for (int i = 0; i < x.size(); i++) d += Math.abs(Math.log1p(x.get(i)) - Math.log1p(y.get(i)));
        return d;
    }

    private static String operator(String key) {
        int paren = key.indexOf('(');
        return paren < 0 ? key : key.substring(0, paren);
    }

    private static List<Long> numbers(String key) {
        List<Long> out = new ArrayList<>();
        Matcher m = NUMBER.matcher(DTYPE.matcher(key.substring(operator(key).length())).replaceAll(""));
        while (m.find()) out.add(Long.parseLong(m.group()));
        return out;
    }
}
