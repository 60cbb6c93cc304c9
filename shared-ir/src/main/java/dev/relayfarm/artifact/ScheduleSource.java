package dev.relayfarm.artifact;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Where a kernel's schedule config came from, as the manifest lists it per kernel ({@code "source"}), so a reader of
 * an artifact sees which kernels run tuned code and which would gain from tuning.
 */
public enum ScheduleSource {
    /** A stored schedule or tuning record of the kernel's own workload, measured on the device class compiled for. */
    @JsonProperty("tuned") TUNED,
    /** The template's default config: nothing stored applied. */
    @JsonProperty("default") DEFAULT,
    /** The best config of a similar workload (nearest-workload transfer), not measured on this one. */
    @JsonProperty("transferred") TRANSFERRED
}
