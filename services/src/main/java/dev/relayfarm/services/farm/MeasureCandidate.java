package dev.relayfarm.services.farm;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.measure.Candidate;
import java.util.Objects;

/**
 * One config of a {@link MeasureRequest} in the form its device class measures it, told apart on the wire by
 * {@code "kind"} (a logical name, never a Java class name):
 * <ul>
 *   <li>{@code "c"}, {@link CKernel}: the kernel lowered to C by the worker; a CPU agent builds and runs it;
 *   <li>{@code "vta-layer"}, {@link VtaLayer}: an accelerator layer of the module stored at {@code irRef} and a schedule;
 *       an FPGA agent ({@code vta-sim-...}) partitions the module, lowers the layer and runs it on the simulator. The
 *       layer's weights stay in the blob store (claim-check), only the reference travels.
 * </ul>
 * A request's configs are all of one kind (its reference's).
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "kind")
@JsonSubTypes({@JsonSubTypes.Type(value = MeasureCandidate.CKernel.class, name = "c"),
        @JsonSubTypes.Type(value = MeasureCandidate.VtaLayer.class, name = "vta-layer")})
public sealed interface MeasureCandidate {
    String workloadKey();

    ScheduleConfig config();

    /** A kernel's C translation unit and signature: the library's {@link Candidate}, as the message carries it. */
    record CKernel(String workloadKey, ScheduleConfig config, String kernelSource, KernelSignature signature) implements MeasureCandidate {
        public CKernel {
            Objects.requireNonNull(workloadKey, "workloadKey");
            Objects.requireNonNull(config, "config");
            Objects.requireNonNull(kernelSource, "kernelSource");
            Objects.requireNonNull(signature, "signature");
        }

        public static CKernel of(Candidate c) {
            return new CKernel(c.workloadKey(), c.config(), c.kernelSource(), c.signature());
        }

        public Candidate candidate() {
            return new Candidate(workloadKey, config, kernelSource, signature);
        }
    }

    /** The offloaded layer of workload {@code workloadKey} in the module at {@code irRef}, under schedule {@code config}. */
    record VtaLayer(String workloadKey, ScheduleConfig config, String irRef) implements MeasureCandidate {
        public VtaLayer {
            Objects.requireNonNull(workloadKey, "workloadKey");
            Objects.requireNonNull(config, "config");
            Objects.requireNonNull(irRef, "irRef");
        }
    }
}
