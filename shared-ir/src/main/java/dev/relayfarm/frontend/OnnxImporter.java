package dev.relayfarm.frontend;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.FunctionProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.registry.OpRegistry;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Imports an ONNX model as a Relay module whose {@code @main} takes the graph inputs and returns the
 * graph output (a tuple when there are several). Initializers and Constant nodes become constants;
 * dynamic dims become {@code Any} unless bound by {@link ImportOptions#inputShapes}; nodes whose
 * inputs are all constant are evaluated at import time, which folds shape subgraphs
 * (Shape → Gather → Concat → Reshape) so static models stay static. Unsupported operators or
 * attributes are errors naming the node, its op type and opset, and the model file.
 *
 * <p>Subgraphs (If branches, Loop and Scan bodies) are converted as nested blocks
 * ({@link GraphScope}); calls of model-local functions ({@code ModelProto.functions}) are expanded
 * in place.
 */
public final class OnnxImporter {
    /**
     * Our own ONNX domain and its one operator, {@code SimulatedQuantize(x, scale)} with attribute {@code signed}: a
     * quantize point, which a QDQ model's activation pairs are rewritten to before import
     * ({@code quantize.qdq.QdqPairs}).
     */
    public static final String OUR_DOMAIN = "dev.relayfarm", QUANTIZE_POINT = "SimulatedQuantize";

    private final String modelName;
    private final Path baseDir;
    private final ImportOptions options;
    private final ForwardTyper typer = new ForwardTyper();
    private final ShapeValues shapeValues = new ShapeValues(typer::typeOf);
    private final Map<Expr, Expr> folded = new IdentityHashMap<>();
    private final Map<String, FunctionProto> functions = new HashMap<>();
    private final List<TypeData> adts = new ArrayList<>();
    private final List<Var> params = new ArrayList<>();
    private GraphProto mainGraph;
    private long opset;
    /** The opset each imported domain's operators follow ("" is the default domain). */
    private Map<String, Long> opsets = Map.of();
    private int functionDepth;

    private OnnxImporter(String modelName, Path baseDir, ImportOptions options) {
        this.modelName = modelName;
        this.baseDir = baseDir;
        this.options = options;
    }

    public static IRModule importModel(Path file, ImportOptions options) {
        ModelProto model = OnnxModels.read(file);
        Path dir = file.toAbsolutePath().getParent();
        return importModel(model, file.getFileName().toString(), dir, options);
    }

    public static IRModule importModel(ModelProto model, String modelName, Path baseDir, ImportOptions options) {
        return new OnnxImporter(modelName, baseDir, options).run(model);
    }

    private IRModule run(ModelProto model) {
        opsets = OnnxModels.opsets(model);
        opset = opsets.getOrDefault("", 1L);
        for (FunctionProto f : model.getFunctionsList()) functions.put(functionKey(f.getDomain(), f.getName()), f);
        GraphProto g = model.getGraph();
        mainGraph = g;
        GraphScope root = GraphScope.root(typer::typeOf);
        for (TensorProto init : g.getInitializerList()) {
            root.define(init.getName(), new Constant(OnnxTensors.toNDArray(init, baseDir, modelName + ": initializer '" + init.getName() + "'")));
        }
        declareKinds(g);
        for (ValueInfoProto in : g.getInputList()) {
            if (root.definesLocally(in.getName())) continue; // an initializer listed as input (IR < 4): a constant
            if (in.getType().getValueCase() == TypeProto.ValueCase.SEQUENCE_TYPE || in.getType().getValueCase() == TypeProto.ValueCase.OPTIONAL_TYPE) {
                root.define(in.getName(), structuredInput(in));
                continue;
            }
            NDArray frozen = options.frozenInputs().get(in.getName());
            if (frozen != null) {
                root.define(in.getName(), new Constant(checkFrozen(in, frozen)));
                continue;
            }
            Var v = Var.fresh(GraphScope.sanitize(in.getName()), inputType(in));
            params.add(v);
            paramOrigin.put(v, in.getName());
            root.define(in.getName(), v);
        }
        for (String bound : options.inputShapes().keySet()) {
            if (g.getInputList().stream().noneMatch(v -> v.getName().equals(bound))) {
                throw new OnnxFormatException(modelName + ": a shape is given for '" + bound + "', which is not a graph input");
            }
        }
        for (String name : options.valueLayouts().keySet()) {
            if (g.getInputList().stream().noneMatch(v -> v.getName().equals(name))) {
                throw new OnnxFormatException(modelName + ": a sequence/optional layout is given for '" + name + "', which is not a graph input");
            }
        }
        for (String name : options.frozenInputs().keySet()) {
            if (g.getInputList().stream().noneMatch(v -> v.getName().equals(name))) {
                throw new OnnxFormatException(modelName + ": frozen input '" + name + "' is not a graph input");
            }
        }
        for (NodeProto node : g.getNodeList()) convertNode(node, root, Set.of());
        List<Expr> results = new ArrayList<>();
        for (ValueInfoProto out : g.getOutputList()) {
            Expr e = root.lookup(out.getName());
            if (e == null) throw new OnnxFormatException(modelName + ": graph output '" + out.getName() + "' is never produced");
            results.add(e);
        }
        Expr body = root.wrap(results.size() == 1 ? results.getFirst() : new Tuple(results));
        IRModule module = IRModule.fromMain(new Function(params, body));
        for (TypeData td : adts) module = module.withType(td);
        return module;
    }

    private static String functionKey(String domain, String name) {
        return (domain.equals("ai.onnx") ? "" : domain) + ":" + name;
    }

    /** Converts one node in {@code scope}; {@code absent} names optional function inputs the call left out. */
    private void convertNode(NodeProto node, GraphScope scope, Set<String> absent) {
        String domain = node.getDomain().equals("ai.onnx") ? "" : node.getDomain();
        FunctionProto local = functions.get(functionKey(domain, node.getOpType()));
        List<Expr> inputs = new ArrayList<>();
        for (String name : node.getInputList()) {
            if (name.isEmpty() || absent.contains(name)) {
                inputs.add(null);
                continue;
            }
            Expr e = scope.lookup(name);
            if (e == null) throw new OnnxFormatException(modelName + ": node '" + node.getName() + "' (" + node.getOpType() + ") uses undefined value '" + name + "'");
            inputs.add(e);
        }
        // Absent trailing optional inputs are trimmed so converters can use inputCount().
        while (!inputs.isEmpty() && inputs.getLast() == null) inputs.removeLast();
        if (local != null) {
            expandFunction(local, node, inputs, scope);
            return;
        }
        // Operators of other domains (ai.onnx.ml, ai.onnx.preview...) are registered under "domain.OpType".
        String key = domain.isEmpty() ? node.getOpType() : domain + "." + node.getOpType();
        if (!domain.isEmpty() && OnnxConverters.find(key).isEmpty()) {
            throw new UnsupportedOpException(modelName + ": node '" + node.getName() + "' (" + node.getOpType() + "): operator " + node.getOpType()
                    + " of domain '" + domain + "' is not supported", key);
        }
        OnnxNode n = new OnnxNode(node, domain.isEmpty() ? opset : opsets.getOrDefault(domain, 1L), modelName, baseDir, inputs, this, scope);
        OnnxConverter converter = OnnxConverters.find(key)
                .orElseThrow(() -> new UnsupportedOpException(n.where() + ": operator " + key + " is not supported", key));
        List<Expr> outs;
        try {
            outs = converter.convert(n);
            n.checkAllAttributesRead();
        } catch (RelationException e) {
            throw n.unsupported(e.getMessage());
        } catch (ArithmeticException | IndexOutOfBoundsException | NullPointerException | NegativeArraySizeException | ClassCastException
                 | IllegalArgumentException | IllegalStateException e) {
            // A converter assumes what the ONNX spec promises (inputs present, attributes in range); a model that breaks
            // the promise must still fail here, at its node, as the model's error, not as an exception the farm retries.
            OnnxFormatException located = n.unsupported("malformed node (" + e + ")");
            located.initCause(e);
            throw located;
        } catch (OutOfMemoryError e) {
            // one allocation sized by the model's dims or attributes failed (nothing was allocated): the model's error
            OnnxFormatException located = n.unsupported("the node needs more memory than the importer may use (" + e.getMessage() + ")");
            located.initCause(e);
            throw located;
        } catch (NeedsConstantException e) {
            List<String> paramNames = params.stream().map(paramOrigin::get).toList();
            throw e.withGraphInputs(dependencies(mainGraph, e.value(), paramNames));
        }
        for (int i = 0; i < node.getOutputCount(); i++) {
            String name = node.getOutput(i);
            if (name.isEmpty()) continue;
            if (i >= outs.size() || outs.get(i) == null) throw n.unsupported("output " + i + " ('" + name + "') is not produced by the converter");
            Expr out = options.foldConstants() ? fold(outs.get(i), n) : outs.get(i);
            typeOf(out, n); // type errors surface at the node that caused them
            if (options.foldConstants() && !(out instanceof Constant)) {
                // a shape computation over tensors with ? dims that does not depend on them (Shape(x)[1:2] of x: [1, 3, ?])
                // is a constant too: consumers that need constants (Expand, Slice, ...) then take it as one
                Optional<ShapeValues.Value> v = shapeValues.of(out);
                if (v.isPresent() && v.get().fullyKnown()) out = new Constant(v.get().toArray());
            }
            scope.define(name, out);
        }
    }

    /**
     * Expands a call of a model-local function in place: the body's nodes are converted in a scope
     * that sees only the function's formal inputs, with attributes that refer to the function's
     * attributes ({@code ref_attr_name}) replaced by the call's (or the function's defaults).
     */
    private void expandFunction(FunctionProto f, NodeProto call, List<Expr> inputs, GraphScope caller) {
        String where = modelName + ": node '" + call.getName() + "' (function " + functionKey(f.getDomain(), f.getName()) + ")";
        if (++functionDepth > 64) throw new OnnxFormatException(where + ": model-local functions nest more than 64 deep (recursive?)");
        try {
            if (call.getInputCount() > f.getInputCount() || call.getOutputCount() > f.getOutputCount()) {
                throw new OnnxFormatException(where + ": called with " + call.getInputCount() + " inputs and " + call.getOutputCount()
                        + " outputs; the function has " + f.getInputCount() + " and " + f.getOutputCount());
            }
            GraphScope body = caller.functionBody();
            Set<String> absent = new HashSet<>();
            for (int i = 0; i < f.getInputCount(); i++) {
                if (i < inputs.size() && inputs.get(i) != null) body.define(f.getInput(i), inputs.get(i));
                else absent.add(f.getInput(i));
            }
            Map<String, AttributeProto> bound = new HashMap<>();
            for (AttributeProto d : f.getAttributeProtoList()) bound.put(d.getName(), d);
            for (AttributeProto a : call.getAttributeList()) {
                if (!f.getAttributeList().contains(a.getName()) && f.getAttributeProtoList().stream().noneMatch(d -> d.getName().equals(a.getName()))) {
                    throw new OnnxFormatException(where + ": attribute '" + a.getName() + "' is not an attribute of the function");
                }
                bound.put(a.getName(), a);
            }
            for (NodeProto node : f.getNodeList()) convertNode(bindAttributes(node, bound), body, absent);
            for (int i = 0; i < call.getOutputCount(); i++) {
                if (call.getOutput(i).isEmpty()) continue;
                Expr out = body.lookup(f.getOutput(i));
                if (out == null) throw new OnnxFormatException(where + ": function output '" + f.getOutput(i) + "' is never produced");
                caller.define(call.getOutput(i), out);
            }
        } finally {
            functionDepth--;
        }
    }

    /** {@code node} with each {@code ref_attr_name} attribute replaced by the bound value (dropped when unbound), also inside subgraphs. */
    private static NodeProto bindAttributes(NodeProto node, Map<String, AttributeProto> bound) {
        NodeProto.Builder b = node.toBuilder().clearAttribute();
        for (AttributeProto a : node.getAttributeList()) {
            if (a.hasRefAttrName()) {
                AttributeProto v = bound.get(a.getRefAttrName());
                if (v != null) b.addAttribute(v.toBuilder().setName(a.getName()).build());
            } else if (a.hasG() || a.getGraphsCount() > 0) {
                AttributeProto.Builder ab = a.toBuilder();
                if (a.hasG()) ab.setG(bindAttributes(a.getG(), bound));
                ab.clearGraphs();
                for (GraphProto g : a.getGraphsList()) ab.addGraphs(bindAttributes(g, bound));
                b.addAttribute(ab.build());
            } else {
                b.addAttribute(a);
            }
        }
        return b.build();
    }

    private static GraphProto bindAttributes(GraphProto g, Map<String, AttributeProto> bound) {
        GraphProto.Builder b = g.toBuilder().clearNode();
        for (NodeProto n : g.getNodeList()) b.addNode(bindAttributes(n, bound));
        return b.build();
    }

    /** A converted subgraph: the values of its outputs, valid inside {@link #wrap}. */
    record Subgraph(GraphScope scope, List<Expr> outputs) {
        /** The subgraph's lets around {@code tail}, an expression over {@link #outputs}. */
        Expr wrap(Expr tail) {
            return scope.wrap(tail);
        }
    }

    /**
     * Converts subgraph {@code g} (a branch or loop body) as a nested block of {@code parent}, its
     * formal inputs bound to {@code inputs} (usually the nested function's parameters).
     */
    Subgraph convertSubgraph(GraphProto g, GraphScope parent, List<? extends Expr> inputs, OnnxNode owner) {
        return convertIn(g, parent.child(), inputs, owner);
    }

    /**
     * Converts subgraph {@code g} (without inputs) inline in {@code parent}: its lets go where the
     * owner's would (an If whose condition is a constant takes one branch, as if its nodes stood
     * in the parent graph), so its outputs need no wrapping.
     */
    List<Expr> convertInline(GraphProto g, GraphScope parent, OnnxNode owner) {
        return convertIn(g, parent.inlined(), List.of(), owner).outputs();
    }

    private Subgraph convertIn(GraphProto g, GraphScope scope, List<? extends Expr> inputs, OnnxNode owner) {
        if (g.getInputCount() != inputs.size()) {
            throw owner.unsupported("subgraph '" + g.getName() + "' has " + g.getInputCount() + " inputs, expected " + inputs.size());
        }
        declareKinds(g);
        for (TensorProto init : g.getInitializerList()) {
            scope.define(init.getName(), new Constant(OnnxTensors.toNDArray(init, baseDir, owner.where() + ": subgraph initializer '" + init.getName() + "'")));
        }
        for (int i = 0; i < inputs.size(); i++) scope.define(g.getInput(i).getName(), inputs.get(i));
        for (NodeProto node : g.getNodeList()) convertNode(node, scope, Set.of());
        List<Expr> outs = new ArrayList<>();
        for (ValueInfoProto out : g.getOutputList()) {
            Expr e = scope.lookup(out.getName());
            if (e == null) throw owner.unsupported("subgraph output '" + out.getName() + "' is never produced");
            outs.add(e);
        }
        return new Subgraph(scope, outs);
    }

    /** Registers an ADT the converted program uses (once per name). */
    void useAdt(TypeData td) {
        if (adts.stream().noneMatch(t -> t.header().equals(td.header()))) adts.add(td);
    }

    /** ONNX names of the graph inputs that became parameters, by parameter. */
    private final Map<Var, String> paramOrigin = new IdentityHashMap<>();

    /**
     * The graph inputs among {@code candidates} that {@code value} is computed from, found by walking
     * the producing nodes backwards; in first-reached order.
     */
    private static List<String> dependencies(GraphProto g, String value, List<String> candidates) {
        Map<String, NodeProto> producer = new HashMap<>();
        producers(g, producer);
        List<String> found = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        ArrayDeque<String> stack = new ArrayDeque<>();
        stack.push(value);
        while (!stack.isEmpty()) {
            String name = stack.pop();
            if (name.isEmpty() || !seen.add(name)) continue;
            if (candidates.contains(name)) found.add(name);
            NodeProto p = producer.get(name);
            if (p != null) {
                p.getInputList().forEach(stack::push);
                for (GraphProto sub : subgraphs(p)) usedNames(sub, stack); // a branch or body may read outer values
            }
        }
        return found;
    }

    /** Every node output of {@code g} and of the subgraphs nested in it, with its producer. */
    private static void producers(GraphProto g, Map<String, NodeProto> out) {
        for (NodeProto node : g.getNodeList()) {
            for (String o : node.getOutputList()) out.put(o, node);
            for (GraphProto sub : subgraphs(node)) producers(sub, out);
        }
    }

    /** Every name a node of {@code g} (or of a graph nested in it) reads, pushed on {@code out}. */
    private static void usedNames(GraphProto g, ArrayDeque<String> out) {
        for (NodeProto node : g.getNodeList()) {
            node.getInputList().forEach(out::push);
            for (GraphProto sub : subgraphs(node)) usedNames(sub, out);
        }
        for (ValueInfoProto o : g.getOutputList()) out.push(o.getName());
    }

    private static List<GraphProto> subgraphs(NodeProto node) {
        List<GraphProto> out = new ArrayList<>();
        for (AttributeProto a : node.getAttributeList()) {
            if (a.hasG()) out.add(a.getG());
            out.addAll(a.getGraphsList());
        }
        return out;
    }

    /** A frozen value must fit the declared input: same element type, same rank, same fixed dims. */
    private NDArray checkFrozen(ValueInfoProto in, NDArray value) {
        boolean hasShape = in.getType().hasTensorType() && in.getType().getTensorType().hasShape();
        if (!hasShape) {
            DType dtype = OnnxDTypes.require(in.getType().getTensorType().getElemType(), modelName + ": graph input '" + in.getName() + "'");
            if (!dtype.equals(value.dtype())) {
                throw new OnnxFormatException(modelName + ": frozen input '" + in.getName() + "' has dtype " + value.dtype() + " but the input is declared " + dtype);
            }
        } else if (inputType(in) instanceof TensorType t) {
            boolean fits = t.dtype().equals(value.dtype()) && t.rank() == value.rank();
            for (int i = 0; fits && i < t.rank(); i++) {
                Dim d = t.shape().get(i);
                fits = !d.isStatic() || d.value() == value.shape()[i];
            }
            if (!fits) {
                throw new OnnxFormatException(modelName + ": frozen input '" + in.getName() + "' is " + new TensorType(java.util.Arrays.stream(value.shape()).mapToObj(Dim::of).toList(), value.dtype()) + " but the input is declared " + t);
            }
        }
        return value;
    }

    /**
     * Whether each ONNX value is a tensor, a sequence or an optional, where the model says so
     * (declared graph inputs, outputs and value_info) or a converter recorded it. Both sequences and
     * optionals import as tuples ({@link SequenceConverters}), so the few operators that accept either
     * (OptionalGetElement, OptionalHasElement) ask here which one a tuple stands for.
     */
    private final Map<String, TypeProto.ValueCase> kinds = new HashMap<>();

    private void declareKinds(GraphProto g) {
        for (List<ValueInfoProto> infos : List.of(g.getInputList(), g.getOutputList(), g.getValueInfoList())) {
            for (ValueInfoProto v : infos) {
                if (v.getType().getValueCase() != TypeProto.ValueCase.VALUE_NOT_SET) kinds.putIfAbsent(v.getName(), v.getType().getValueCase());
            }
        }
    }

    /** The kind of ONNX value {@code name}, or {@code VALUE_NOT_SET} when neither the model nor a converter said. */
    TypeProto.ValueCase kindOf(String name) {
        return kinds.getOrDefault(name, TypeProto.ValueCase.VALUE_NOT_SET);
    }

    void recordKind(String name, TypeProto.ValueCase kind) {
        if (!name.isEmpty() && kind != TypeProto.ValueCase.VALUE_NOT_SET) kinds.put(name, kind);
    }

    /**
     * A sequence or optional graph input, by its {@link ValueLayout}: a tuple of fresh parameters (one
     * per tensor it holds, depth first), nested as the value is.
     */
    private Expr structuredInput(ValueInfoProto in) {
        ValueLayout layout = options.valueLayouts().get(in.getName());
        String what = in.getType().getValueCase() == TypeProto.ValueCase.SEQUENCE_TYPE ? "a sequence" : "an optional";
        if (layout == null) {
            throw new OnnxFormatException(modelName + ": graph input '" + in.getName() + "' is " + what + "; its length and element shapes"
                    + " must be given (ImportOptions.valueLayouts; relayc check and the conformance harness take them from the test data)");
        }
        if (options.frozenInputs().containsKey(in.getName())) {
            throw new OnnxFormatException(modelName + ": frozen input '" + in.getName() + "' is " + what + ", only tensors can be frozen");
        }
        return structured(in.getName(), in.getType(), layout, GraphScope.sanitize(in.getName()), "graph input '" + in.getName() + "'");
    }

    private Expr structured(String input, TypeProto type, ValueLayout layout, String varName, String what) {
        return switch (layout) {
            case ValueLayout.Tensor t -> {
                if (type.getValueCase() != TypeProto.ValueCase.TENSOR_TYPE) throw layoutMismatch(what, type, "a tensor");
                DType dtype = OnnxDTypes.require(type.getTensorType().getElemType(), modelName + ": " + what);
                if (type.getTensorType().hasShape()) {
                    TensorShapeProto shape = type.getTensorType().getShape();
                    boolean fits = shape.getDimCount() == t.shape().size();
                    for (int i = 0; fits && i < shape.getDimCount(); i++) {
                        TensorShapeProto.Dimension d = shape.getDim(i);
                        fits = !d.hasDimValue() || d.getDimValue() < 0 || d.getDimValue() == t.shape().get(i);
                    }
                    if (!fits) throw new OnnxFormatException(modelName + ": the shape " + t.shape() + " given for " + what + " does not fit its declared shape");
                }
                Var v = Var.fresh(varName, new TensorType(t.shape().stream().map(Dim::of).toList(), dtype));
                params.add(v);
                paramOrigin.put(v, input);
                yield v;
            }
            case ValueLayout.Sequence s -> {
                if (type.getValueCase() != TypeProto.ValueCase.SEQUENCE_TYPE) throw layoutMismatch(what, type, "a sequence");
                List<Expr> fields = new ArrayList<>();
                for (int i = 0; i < s.elements().size(); i++) {
                    fields.add(structured(input, type.getSequenceType().getElemType(), s.elements().get(i), varName + "_" + i, what + " element " + i));
                }
                yield new Tuple(fields);
            }
            case ValueLayout.Optional o -> {
                if (type.getValueCase() != TypeProto.ValueCase.OPTIONAL_TYPE) throw layoutMismatch(what, type, "an optional");
                yield o.isEmpty() ? new Tuple(List.of())
                        : new Tuple(List.of(structured(input, type.getOptionalType().getElemType(), o.element(), varName, what)));
            }
        };
    }

    private OnnxFormatException layoutMismatch(String what, TypeProto declared, String given) {
        return new OnnxFormatException(modelName + ": the value given for " + what + " is " + given + " but it is declared " + declared.getValueCase());
    }

    /** The shape value {@code e} computes ({@link ShapeValues}), or empty when it is not one. */
    Optional<ShapeValues.Value> shapeValue(Expr e) {
        return shapeValues.of(e);
    }

    ForwardTyper typer() {
        return typer;
    }

    private Type inputType(ValueInfoProto in) {
        TypeProto t = in.getType();
        if (t.getValueCase() != TypeProto.ValueCase.TENSOR_TYPE) {
            throw new OnnxFormatException(modelName + ": graph input '" + in.getName() + "' of kind " + t.getValueCase() + " is not supported");
        }
        DType dtype = OnnxDTypes.require(t.getTensorType().getElemType(), modelName + ": graph input '" + in.getName() + "'");
        List<Long> bound = options.inputShapes().get(in.getName());
        TensorShapeProto shape = t.getTensorType().getShape();
        if (bound != null) {
            if (t.getTensorType().hasShape() && bound.size() != shape.getDimCount()) {
                throw new OnnxFormatException(modelName + ": the shape given for " + in.getName() + " has rank " + bound.size() + " but the input has rank " + shape.getDimCount());
            }
            List<Dim> dims = new ArrayList<>();
            for (int i = 0; i < bound.size(); i++) {
                TensorShapeProto.Dimension d = t.getTensorType().hasShape() ? shape.getDim(i) : null;
                boolean fixed = d != null && d.hasDimValue() && d.getDimValue() >= 0;
                if (bound.get(i) == ImportOptions.ANY_DIM) {
                    dims.add(fixed ? Dim.of(d.getDimValue()) : Dim.ANY); // '?' keeps the declared dim
                    continue;
                }
                if (fixed && d.getDimValue() != bound.get(i)) {
                    throw new OnnxFormatException(modelName + ": the shape given for " + in.getName() + " sets dim " + i + " to " + bound.get(i) + " but the model fixes it to " + d.getDimValue());
                }
                dims.add(Dim.of(bound.get(i)));
            }
            return new TensorType(dims, dtype);
        }
        if (!t.getTensorType().hasShape()) {
            throw new OnnxFormatException(modelName + ": graph input '" + in.getName() + "' has no shape (even its rank is unknown); give it one (--shape NAME=DIMS, or a job's shapes field)");
        }
        List<Dim> dims = new ArrayList<>();
        // Some exporters (Paddle) write -1 for a dynamic dim instead of leaving the value unset.
        for (TensorShapeProto.Dimension d : shape.getDimList()) dims.add(d.hasDimValue() && d.getDimValue() >= 0 ? Dim.of(d.getDimValue()) : Dim.ANY);
        return new TensorType(dims, dtype);
    }

    Type typeOf(Expr e, OnnxNode n) {
        try {
            return typer.typeOf(e);
        } catch (RelationException ex) {
            throw n.unsupported(ex.getMessage());
        }
    }

    /**
     * Evaluates every operator call in {@code e} whose arguments are all constants (or tuples of
     * constants), bottom-up; results larger than the limit stay calls.
     */
    Expr fold(Expr e, OnnxNode n) {
        Expr done = folded.get(e);
        if (done != null) return done;
        ExprRewriter folder = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                Expr known = folded.get(pre);
                if (known != null) return known;
                Expr result = switch (post) {
                    case Call c -> tryFold(c, n);
                    case TupleGetItem g when g.tuple() instanceof Tuple t -> t.fields().get(g.index());
                    default -> post;
                };
                folded.put(pre, result);
                return result;
            }
        };
        return folder.rewrite(e);
    }

    private Expr tryFold(Call c, OnnxNode n) {
        if (!(c.callee() instanceof Op op)) return c;
        List<NDArray> args = new ArrayList<>();
        for (Expr a : c.args()) {
            if (a instanceof Constant k) args.add(k.data());
            else if (a instanceof Tuple t && t.fields().stream().allMatch(f -> f instanceof Constant)) {
                t.fields().forEach(f -> args.add(((Constant) f).data()));
            } else return c;
        }
        OpDef<?> def = OpRegistry.get(op.name());
        Type resultType = typeOf(c, n);
        if (resultType instanceof TensorType tt && tt.isStatic()) {
            long bytes = (long) tt.dtype().storageBytes() * java.util.Arrays.stream(tt.staticShape()).asLongStream().reduce(1, (x, y) -> x * y);
            if (bytes > options.foldLimitBytes()) return c;
        }
        List<NDArray> outs;
        try {
            outs = def.compute(args, c.attrs());
        } catch (RuntimeException ex) {
            throw n.unsupported("evaluating " + op.name() + " on constants failed: " + ex.getMessage());
        }
        if (outs.size() == 1 && !(resultType instanceof dev.relayfarm.ir.TupleType)) return new Constant(outs.getFirst());
        return new Tuple(outs.stream().map(a -> (Expr) new Constant(a)).toList());
    }
}
