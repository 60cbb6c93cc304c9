package dev.relayfarm.ops;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.TypeRelationFn;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * One operator of the library, registered as data: its name, arity ({@code -1} = variadic), the
 * parser of its typed attributes, its type relation, its fusion pattern and its reference kernel.
 *
 * @param <A> the typed attributes record
 */
public record OpDef<A>(
        String name,
        int numInputs,
        AttrsParser<A> attrsParser,
        TypeRelationFn<A> relation,
        OpPattern pattern,
        Kernel<A> kernel) {

    /**
     * The typed attributes. Attribute values and shapes come from the user's model, so an arithmetic overflow
     * while reading or relating them (a dim of 2^62, an axis beyond int) is the model's error, reported as a
     * {@link dev.relayfarm.ops.RelationException} naming the operator, never an {@link ArithmeticException}.
     */
    public A parseAttrs(Attrs attrs) {
        try {
            return attrsParser.parse(attrs);
        } catch (ArithmeticException e) {
            throw tooLarge(e);
        }
    }

    /** Runs the relation with attributes parsed from the call's generic ones. */
    public boolean solve(List<Type> types, Attrs attrs, TypeReporter reporter) {
        return solve(types, parseAttrs(attrs), reporter);
    }

    /** Runs the relation with parsed attributes; overflow is the model's error (see {@link #parseAttrs}). */
    public boolean solve(List<Type> types, A attrs, TypeReporter reporter) {
        if (!acceptsStrings()) {
            for (int i = 0; i < types.size() - 1; i++) {
                // a tuple argument (concatenate, stack) counts by its fields
                List<Type> fields = types.get(i) instanceof dev.relayfarm.ir.TupleType tt ? tt.fields() : List.of(types.get(i));
                for (Type f : fields) {
                    if (f instanceof dev.relayfarm.ir.TensorType t && t.dtype().isString()) {
                        throw new dev.relayfarm.ops.RelationException(name + ": does not accept string tensors (input " + i + " is " + types.get(i) + ")");
                    }
                }
            }
        }
        try {
            return relation.solve(types, types.size() - 1, attrs, reporter);
        } catch (ArithmeticException e) {
            throw tooLarge(e);
        }
    }

    private dev.relayfarm.ops.RelationException tooLarge(ArithmeticException e) {
        return new dev.relayfarm.ops.RelationException(name + ": attribute values or shapes too large (" + e.getMessage() + ")");
    }

    /**
     * Applies the relation forward to known input types and returns the output type, or empty when
     * the relation defers (an input is still incomplete). This is also the operator's shape
     * function: with the run-time shapes of the inputs it yields the run-time output shape.
     * Throws {@link dev.relayfarm.ops.RelationException} when the inputs violate the relation.
     */
    public java.util.Optional<Type> inferOutput(List<Type> inputs, Attrs attrs) {
        return dev.relayfarm.ops.ForwardReporter.apply(this, inputs, attrs);
    }

    /**
     * Operators whose kernels compute on string tensors: the {@code strings.*} family, {@code label_encoder} and
     * string equality. Every other relation refuses a string input before it runs (its kernel reads numbers).
     */
    public boolean acceptsStrings() {
        return name.startsWith("strings.") || STRING_OPS.contains(name);
    }

    private static final java.util.Set<String> STRING_OPS = java.util.Set.of("equal", "not_equal", "label_encoder");

    /** Runs the reference kernel with attributes parsed from the call's generic ones. */
    public List<NDArray> compute(List<NDArray> inputs, Attrs attrs) {
        return kernel.compute(inputs, attrsParser.parse(attrs));
    }
}
