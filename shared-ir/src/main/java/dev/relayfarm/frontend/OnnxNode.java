package dev.relayfarm.frontend;

import dev.relayfarm.frontend.proto.Onnx.TypeProto;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One ONNX node being converted: its inputs as Relay expressions, typed attribute access (every
 * attribute must be read or explicitly ignored, so an unsupported attribute is an error, not a silent
 * mis-conversion), the types of what was built so far, and helpers to build operator calls.
 */
public final class OnnxNode {
    private final NodeProto proto;
    private final long opset;
    private final String modelName;
    private final Path baseDir;
    private final List<Expr> inputs;
    private final OnnxImporter importer;
    private final GraphScope scope;
    private final Map<String, AttributeProto> attrs = new HashMap<>();
    private final Set<String> read = new HashSet<>();

    OnnxNode(NodeProto proto, long opset, String modelName, Path baseDir, List<Expr> inputs, OnnxImporter importer, GraphScope scope) {
        this.scope = scope;
        this.proto = proto;
        this.opset = opset;
        this.modelName = modelName;
        this.baseDir = baseDir;
        this.inputs = inputs;
        this.importer = importer;
        for (AttributeProto a : proto.getAttributeList()) attrs.put(a.getName(), a);
    }

    public NodeProto proto() {
        return proto;
    }

    public String opType() {
        return proto.getOpType();
    }

    /** The opset version of the node's domain that the model imports. */
    public long opset() {
        return opset;
    }

    /** "model.onnx: node 'conv1' (Conv, opset 11)" — the prefix of every error about this node. */
    public String where() {
        String name = proto.getName().isEmpty() ? "#" + String.join(",", proto.getOutputList()) : proto.getName();
        return modelName + ": node '" + name + "' (" + proto.getOpType() + ", opset " + opset + ")";
    }

    public OnnxFormatException unsupported(String what) {
        return new OnnxFormatException(where() + ": " + what);
    }

    // ---- inputs ----

    public int inputCount() {
        return inputs.size();
    }

    /** True when input {@code i} is given (optional inputs may be missing or named ""). */
    public boolean hasInput(int i) {
        return i < inputs.size() && inputs.get(i) != null;
    }

    public Expr input(int i) {
        if (!hasInput(i)) throw unsupported("required input " + i + " is missing");
        return inputs.get(i);
    }

    public List<Expr> inputs() {
        return inputs;
    }

    public int outputCount() {
        return proto.getOutputCount();
    }

    /** True when output {@code i} is used (named); optional outputs may be "". */
    public boolean hasOutput(int i) {
        return i < proto.getOutputCount() && !proto.getOutput(i).isEmpty();
    }

    /** Whether input {@code i} is a tensor, sequence or optional as far as the model or earlier converters said ({@code VALUE_NOT_SET}: unknown). */
    public TypeProto.ValueCase inputKind(int i) {
        return i < proto.getInputCount() ? importer.kindOf(proto.getInput(i)) : TypeProto.ValueCase.VALUE_NOT_SET;
    }

    /** Records what output {@code i} is (a sequence, an optional), for the operators that accept either. */
    public void recordOutputKind(int i, TypeProto.ValueCase kind) {
        if (i < proto.getOutputCount()) importer.recordKind(proto.getOutput(i), kind);
    }

    public Type typeOf(Expr e) {
        return importer.typeOf(e, this);
    }

    /** The tensor type of input {@code i}; throws naming the node when it is not a tensor. */
    public TensorType inputType(int i) {
        Type t = typeOf(input(i));
        if (t instanceof TensorType tt) return tt;
        throw unsupported("input " + i + " must be a tensor, got " + t);
    }

    public int inputRank(int i) {
        return inputType(i).rank();
    }

    /** The value of input {@code i} if it is (or folded to) a constant. */
    public Optional<NDArray> constantInput(int i) {
        if (!hasInput(i)) return Optional.empty();
        return importer.fold(input(i), this) instanceof Constant c ? Optional.of(c.data()) : Optional.empty();
    }

    /**
     * Input {@code i} as a shape value ({@link ShapeValues}): known elements and {@code ?} dims of tensors; empty when
     * it is not computed from shapes and constants alone.
     */
    Optional<ShapeValues.Value> shapeValue(int i) {
        if (!hasInput(i)) return Optional.empty();
        return importer.shapeValue(importer.fold(input(i), this));
    }

    /**
     * Input {@code i}'s value, which must be a constant (after folding); otherwise a
     * {@link NeedsConstantException} naming the value.
     */
    public NDArray requireConstant(int i, String what) {
        if (!hasInput(i)) throw unsupported(what + " (input " + i + ") is missing");
        return constantInput(i).orElseThrow(() -> new NeedsConstantException(where() + ": "
                + what + " (input " + i + ") must be a constant; computed " + what + " values are not supported",
                proto.getInput(i), List.of()));
    }

    /** Input {@code i} as integers; it must be a constant (after folding). */
    public long[] constantInts(int i, String what) {
        NDArray a = requireConstant(i, what);
        long[] out = new long[a.elementCount()];
        for (int k = 0; k < out.length; k++) out[k] = a.getLong(k);
        return out;
    }

    // ---- attributes ----

    public boolean hasAttr(String name) {
        read.add(name);
        return attrs.containsKey(name);
    }

    private AttributeProto attr(String name, AttributeProto.AttributeType type) {
        read.add(name);
        AttributeProto a = attrs.get(name);
        if (a == null) return null;
        if (a.hasRefAttrName()) throw unsupported("attribute '" + name + "' refers to a function attribute that was not bound");
        if (a.getType() != AttributeProto.AttributeType.UNDEFINED && a.getType() != type) {
            throw unsupported("attribute '" + name + "' must be " + type + ", got " + a.getType());
        }
        return a;
    }

    public long attrInt(String name, long dflt) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.INT);
        return a == null ? dflt : a.getI();
    }

    public float attrFloat(String name, float dflt) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.FLOAT);
        return a == null ? dflt : a.getF();
    }

    public String attrString(String name, String dflt) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.STRING);
        return a == null ? dflt : a.getS().toString(StandardCharsets.UTF_8);
    }

    /** An INTS attribute, or null when absent. */
    public long[] attrInts(String name) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.INTS);
        return a == null ? null : a.getIntsList().stream().mapToLong(Long::longValue).toArray();
    }

    /** An INTS attribute the operator cannot do without; absent, an error naming it. */
    public long[] requiredInts(String name) {
        long[] v = attrInts(name);
        if (v == null) throw unsupported("attribute '" + name + "' is required");
        return v;
    }

    /** A STRINGS attribute (each UTF-8), or null when absent. */
    public List<String> attrStrings(String name) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.STRINGS);
        return a == null ? null : a.getStringsList().stream().map(x -> x.toString(StandardCharsets.UTF_8)).toList();
    }

    /** A FLOATS attribute, or null when absent. */
    public float[] attrFloats(String name) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.FLOATS);
        if (a == null) return null;
        float[] out = new float[a.getFloatsCount()];
        for (int i = 0; i < out.length; i++) out[i] = a.getFloats(i);
        return out;
    }

    /** A TENSOR attribute decoded, or null when absent. */
    public NDArray attrTensor(String name) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.TENSOR);
        return a == null ? null : OnnxTensors.toNDArray(a.getT(), baseDir, where() + ": attribute '" + name + "'");
    }

    /** A GRAPH attribute (If branches, Loop/Scan bodies); throws naming the node when absent. */
    public GraphProto attrGraph(String name) {
        AttributeProto a = attr(name, AttributeProto.AttributeType.GRAPH);
        if (a == null || !a.hasG()) throw unsupported("graph attribute '" + name + "' is required");
        return a.getG();
    }

    // ---- nested blocks ----

    /**
     * Converts subgraph {@code g} as a block nested in this node's graph, its formal inputs bound to
     * {@code inputs}; the result's lets must wrap every use of its outputs.
     */
    OnnxImporter.Subgraph convertSubgraph(GraphProto g, List<? extends Expr> inputs) {
        return importer.convertSubgraph(g, scope, inputs, this);
    }

    /** Converts input-less subgraph {@code g} inline in this node's graph (see {@link OnnxImporter#convertInline}); its outputs. */
    List<Expr> convertInline(GraphProto g) {
        return importer.convertInline(g, scope, this);
    }

    /** Binds {@code value} with a {@code let} in this node's graph, just before the node; returns the variable. */
    public Var bind(String hint, Expr value) {
        return scope.bind(hint, value);
    }

    /** Binds a recursive local function to its own (annotated) name. */
    void bind(Var self, Expr value) {
        scope.bind(self, value);
    }

    OnnxImporter importer() {
        return importer;
    }

    /** Marks an attribute as deliberately not affecting the conversion (e.g. a training-only flag). */
    public void ignore(String... names) {
        for (String n : names) read.add(n);
    }

    /** Requires an attribute to be absent or have the given value; anything else is unsupported. */
    public void expectInt(String name, long supported) {
        long v = attrInt(name, supported);
        if (v != supported) throw unsupported("attribute " + name + "=" + v + " is not supported (only " + supported + ")");
    }

    /** Called after conversion: an attribute nobody read would be silently ignored, so it is an error. */
    void checkAllAttributesRead() {
        for (String name : attrs.keySet()) {
            if (!read.contains(name)) throw unsupported("attribute '" + name + "' is not supported");
        }
    }

    // ---- building ----

    /** {@code op(args...)} with keyword attributes given as alternating name, value pairs. */
    public Call call(String op, List<Expr> args, Object... keyValues) {
        Attrs a = Attrs.EMPTY;
        for (int i = 0; i < keyValues.length; i += 2) a = a.with((String) keyValues[i], attrValue(keyValues[i + 1]));
        return new Call(Op.get(op), args, a);
    }

    public Call call(String op, Expr... args) {
        return new Call(Op.get(op), List.of(args));
    }

    /** Converts Java values to attribute values: Long/Integer, Double/Float, String, Boolean, long[]/int[]/double[], null. */
    public static AttrValue attrValue(Object v) {
        return switch (v) {
            case null -> AttrValue.NONE;
            case AttrValue a -> a;
            case Long l -> AttrValue.of(l);
            case Integer i -> AttrValue.of((long) i);
            case Double d -> AttrValue.of(d);
            case Float f -> AttrValue.of((double) f);
            case String s -> AttrValue.of(s);
            case Boolean b -> AttrValue.of(b);
            case long[] ls -> AttrValue.ints(ls);
            case int[] is -> AttrValue.ints(java.util.Arrays.stream(is).asLongStream().toArray());
            case double[] ds -> new AttrValue.ListValue(java.util.Arrays.stream(ds).mapToObj(AttrValue::of).toList());
            case List<?> l -> new AttrValue.ListValue(l.stream().map(OnnxNode::attrValue).toList());
            default -> throw new IllegalArgumentException("no attribute value for " + v.getClass());
        };
    }

    public static Constant constant(NDArray a) {
        return new Constant(a);
    }
}
