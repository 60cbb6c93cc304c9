package dev.relayfarm.interp;

import java.util.Objects;

/**
 * A mutable reference cell ({@code ref(v)}). A class, not a record: its content changes with
 * {@code ref_write}, and two cells are the same cell only by identity.
 */
public final class RefValue implements Value {
    private Value value;

    public RefValue(Value initial) {
        this.value = Objects.requireNonNull(initial, "initial");
    }

    public Value get() {
        return value;
    }

    public void set(Value newValue) {
        this.value = Objects.requireNonNull(newValue, "newValue");
    }

    @Override
    public String toString() {
        return "Ref(" + value + ")";
    }
}
