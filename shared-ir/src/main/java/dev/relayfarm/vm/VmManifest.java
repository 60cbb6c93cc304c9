package dev.relayfarm.vm;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.serde.Sha256;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The {@code manifest.json} of a VM artifact ({@link VmArtifact}): the graph manifest's format name and shared
 * parts ({@link Manifest.Compiler}, {@link Manifest.Tensor}, {@link Manifest.Kernel}), with {@code "executor": "vm"}
 * and the executable's file in place of the graph executor's entry points, parameters and memory plan. A loader
 * tells the two apart by {@link #executorOf}: a graph manifest has no {@code executor} field.
 *
 * @param inputs  @main's parameters; a parameter that is not a statically shaped tensor has a null shape and its type as {@code dtype}
 * @param lib     {@code lib.so}, or null for a program without tensor operators
 */
@JsonPropertyOrder({"format", "executor", "compiler", "target", "target_features", "opt_level", "lib", "executable", "inputs", "functions",
        "instructions", "kernels", "files", "content_hash"})
public record VmManifest(String format, String executor, Manifest.Compiler compiler, String target, @JsonProperty("target_features") List<String> targetFeatures,
                         @JsonProperty("opt_level") int optLevel, String lib, String executable, List<Manifest.Tensor> inputs, int functions, int instructions,
                         List<Manifest.Kernel> kernels, Map<String, String> files,
                         @JsonProperty("content_hash") @JsonInclude(JsonInclude.Include.NON_NULL) String contentHash) {
    public static final String EXECUTOR = "vm";

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** This manifest with its content hash: the SHA-256 of its JSON without one (as {@link Manifest#withContentHash}). */
    public VmManifest withContentHash() {
        VmManifest unhashed = new VmManifest(format, executor, compiler, target, targetFeatures, optLevel, lib, executable, inputs, functions, instructions,
                kernels, files, null);
        return new VmManifest(format, executor, compiler, target, targetFeatures, optLevel, lib, executable, inputs, functions, instructions, kernels,
                files, Sha256.hex(unhashed.toJson().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a manifest is plain JSON", e);
        }
    }

    /** {@code "vm"} for a VM artifact, {@code "graph"} for a graph-executor artifact (whose manifest predates the field). */
    public static String executorOf(Path dir) {
        return tree(dir).path("executor").asText("graph");
    }

    public static VmManifest read(Path dir) {
        JsonNode tree = tree(dir);
        if (!EXECUTOR.equals(tree.path("executor").asText())) throw new ArtifactException(dir.resolve(Manifest.FILE) + " is not a VM artifact's manifest (no \"executor\": \"vm\")");
        try {
            return JSON.treeToValue(tree, VmManifest.class);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new ArtifactException(dir.resolve(Manifest.FILE) + ": malformed VM manifest (" + e.getMessage() + ")", e);
        }
    }

    private static JsonNode tree(Path dir) {
        Path file = dir.resolve(Manifest.FILE);
        JsonNode tree;
        try {
            tree = JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new ArtifactException("cannot read " + file + ": " + e.getMessage(), e);
        }
        if (!Manifest.FORMAT.equals(tree.path("format").asText())) {
            throw new ArtifactException(file + " is not a RelayFarm artifact manifest (format " + tree.path("format") + ")");
        }
        return tree;
    }
}
