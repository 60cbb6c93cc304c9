package dev.relayfarm.kernel.template;

/**
 * A configuration that does not fit the template or the workload (an unknown knob, a tile that does
 * not divide the axis, a block that is not the layout's). The autotuner drops such a configuration;
 * a hand-written one gets this message naming the template, the knob and the constraint.
 */
public final class InvalidConfigException extends IllegalArgumentException {
    public InvalidConfigException(String message) {
        super(message);
    }
}
