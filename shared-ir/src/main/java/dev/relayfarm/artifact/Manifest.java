package dev.relayfarm.artifact;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.relayfarm.ir.DType;
import dev.relayfarm.serde.Sha256;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * An artifact's {@code manifest.json} (ARCHITECTURE.md section 6): what the compiler wrote and everything a loader
 * needs — the entry points, the inputs and outputs, the parameters' layout in params.bin, the memory plan, each
 * kernel's workload and schedule config, the SHA-256 of every file, and the content hash over all of it. The
 * compiler writes it with {@link #toJson}, the runtime and the farm read it with {@link #read}: one definition of
 * the format on both sides. Field order is part of the format (the content hash is taken over these bytes).
 *
 * @param lib          {@code lib.so}, or null when only sources were written ({@code note} says why)
 * @param note         why there is no lib.so; absent from the JSON when there is one
 * @param files        SHA-256 per file, in path order (null for a file not written)
 * @param contentHash  SHA-256 of this manifest's JSON without the {@code content_hash} field; null until computed
 */
@JsonPropertyOrder({"format", "compiler", "target", "target_features", "opt_level", "lib", "note", "entry", "inputs", "outputs", "params",
        "memory", "kernels", "steps", "files", "content_hash"})
public record Manifest(String format, Compiler compiler, String target, @JsonProperty("target_features") List<String> targetFeatures,
                       @JsonProperty("opt_level") int optLevel, String lib, @JsonInclude(JsonInclude.Include.NON_NULL) String note,
                       Entry entry, List<Tensor> inputs, List<Tensor> outputs, Params params, Memory memory, List<Kernel> kernels,
                       int steps, Map<String, String> files,
                       @JsonProperty("content_hash") @JsonInclude(JsonInclude.Include.NON_NULL) String contentHash) {
    public static final String FORMAT = "relayfarm-artifact/1";
    public static final String FILE = "manifest.json";

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            // newer writers may add fields; a loader reads what it knows
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** Who compiled it: our version, the C compiler's identity (null when none ran) and its flags. */
    @JsonPropertyOrder({"relayfarm", "cc", "flags"})
    public record Compiler(String relayfarm, String cc, List<String> flags) {}

    /**
     * The C entry points of lib.so ({@code relayfarm_create}, ...): the artifact runs from any language.
     *
     * @param profile {@code relayfarm_profile}, the timed run (with {@code relayfarm_num_kernels} and {@code relayfarm_kernel_name});
     *                null in manifests written before it existed, and then absent from the JSON, so their bytes and content hash stay
     */
    @JsonPropertyOrder({"create", "run", "set_num_threads", "destroy", "last_error", "profile"})
    public record Entry(String create, String run, @JsonProperty("set_num_threads") String setNumThreads, String destroy,
                        @JsonProperty("last_error") String lastError, @JsonInclude(JsonInclude.Include.NON_NULL) String profile) {}

    /** A graph input or output as the manifest lists it. */
    @JsonPropertyOrder({"name", "shape", "dtype"})
    public record Tensor(String name, List<Integer> shape, String dtype) {
        public static Tensor of(TensorSpec spec) {
            return new Tensor(spec.name(), spec.shape(), spec.dtype().toString());
        }

        public TensorSpec spec() {
            return new TensorSpec(name, shape, DType.parse(dtype));
        }
    }

    /** The constants in {@code file}: their count, total bytes and each one's place. */
    @JsonPropertyOrder({"file", "count", "data_bytes", "tensors"})
    public record Params(String file, int count, @JsonProperty("data_bytes") long dataBytes, List<Param> tensors) {}

    /** One constant and its byte offset in params.bin. */
    @JsonPropertyOrder({"name", "shape", "dtype", "offset"})
    public record Param(String name, List<Integer> shape, String dtype, long offset) {}

    /** The memory plan's totals. */
    @JsonPropertyOrder({"arena_bytes", "intermediate_bytes", "intermediates", "blocks"})
    public record Memory(@JsonProperty("arena_bytes") long arenaBytes, @JsonProperty("intermediate_bytes") long intermediateBytes,
                         int intermediates, int blocks) {}

    /**
     * One compiled kernel: its symbol, workload key, schedule config (JSON; null for none), where the config came from
     * (null in manifests written before sources were listed) and call count.
     */
    @JsonPropertyOrder({"name", "workload", "config", "source", "calls"})
    public record Kernel(String name, String workload, JsonNode config, ScheduleSource source, int calls) {}

    /** This manifest with its content hash filled in: the SHA-256 of its JSON without one. */
    public Manifest withContentHash() {
        Manifest unhashed = new Manifest(format, compiler, target, targetFeatures, optLevel, lib, note, entry, inputs, outputs, params, memory,
                kernels, steps, files, null);
        String hash = Sha256.hex(unhashed.bytes());
        return new Manifest(format, compiler, target, targetFeatures, optLevel, lib, note, entry, inputs, outputs, params, memory, kernels,
                steps, files, hash);
    }

    /** The JSON as written to manifest.json (indented, no trailing newline). */
    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a manifest is plain JSON", e);
        }
    }

    /** The JSON as a tree (what the farm stores beside the artifact), the same fields {@link #toJson} writes. */
    public JsonNode toTree() {
        return JSON.valueToTree(this);
    }

    private byte[] bytes() {
        try {
            return JSON.writeValueAsBytes(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a manifest is plain JSON", e);
        }
    }

    /** A schedule config's JSON text as the tree a {@link Kernel} holds. */
    public static JsonNode configTree(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a schedule config is plain JSON", e);
        }
    }

    /** Reads {@code dir/manifest.json}; an {@link ArtifactException} when it is missing, unreadable or not ours. */
    public static Manifest read(Path dir) {
        Path file = dir.resolve(FILE);
        JsonNode tree;
        try {
            tree = JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new ArtifactException("cannot read " + file + ": " + e.getMessage(), e);
        }
        if (!FORMAT.equals(tree.path("format").asText())) {
            throw new ArtifactException(file + " is not a RelayFarm artifact manifest (format " + tree.path("format") + ")");
        }
        if (tree.has("executor") && !"graph".equals(tree.path("executor").asText())) {
            // a VM artifact (dev.relayfarm.vm.VmManifest) shares the format name but has no graph executor to load
            throw new ArtifactException(file + " is an artifact for the " + tree.path("executor").asText() + " executor, not the graph executor (load it with VmArtifact)");
        }
        try {
            return JSON.treeToValue(tree, Manifest.class);
        } catch (JsonProcessingException e) {
            throw new ArtifactException(file + ": malformed manifest (" + e.getOriginalMessage() + ")", e);
        } catch (IllegalArgumentException e) {
            throw new ArtifactException(file + ": malformed manifest (" + e.getMessage() + ")", e);
        }
    }
}
