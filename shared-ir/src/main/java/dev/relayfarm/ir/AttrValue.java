package dev.relayfarm.ir;

import java.util.List;

/**
 * The value of one keyword attribute of a call or function, as written in Relay text:
 * {@code 3}, {@code 1e-05f}, {@code "NCHW"}, {@code True}, {@code [1, 1]}, {@code None}.
 * Operators turn these into their typed attribute records.
 */
public sealed interface AttrValue {
    record IntValue(long value) implements AttrValue {}

    record FloatValue(double value) implements AttrValue {
        @Override
        public boolean equals(Object o) {
            // Bitwise, so NaN attributes equal themselves and round trips compare equal.
            return o instanceof FloatValue f && Double.doubleToLongBits(f.value) == Double.doubleToLongBits(value);
        }

        @Override
        public int hashCode() {
            return Double.hashCode(value);
        }
    }

    record StringValue(String value) implements AttrValue {}

    record BoolValue(boolean value) implements AttrValue {}

    record ListValue(List<AttrValue> values) implements AttrValue {
        public ListValue {
            values = List.copyOf(values);
        }
    }

    record NoneValue() implements AttrValue {}

    AttrValue NONE = new NoneValue();

    static AttrValue of(long v) {
        return new IntValue(v);
    }

    static AttrValue of(double v) {
        return new FloatValue(v);
    }

    static AttrValue of(String v) {
        return new StringValue(v);
    }

    static AttrValue of(boolean v) {
        return new BoolValue(v);
    }

    static AttrValue ints(long... vs) {
        return new ListValue(java.util.Arrays.stream(vs).mapToObj(AttrValue::of).toList());
    }
}
