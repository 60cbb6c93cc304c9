package dev.relayfarm.ad;

import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.ToANormalForm;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeException;
import dev.relayfarm.types.TypeInference;

/** What reverse and forward mode do alike before and after their walk. */
final class AdPrograms {
    private AdPrograms() {}

    /**
     * The module typed and in A-normal form, so that a transformation walks chains of bindings in a loop and recurses
     * only into nested scopes.
     */
    static InferResult typedAnf(IRModule module) {
        // A-normal form needs no types, so the module is typed once, after it (a type error still names the
        // original node: the form only adds bindings around it)
        return TypeInference.infer(new ToANormalForm().run(module, new PassContext(PassOptions.level(0))).module());
    }

    static GlobalVar global(InferResult typed, String name, String mode) {
        return typed.module().functions().keySet().stream().filter(g -> g.name().equals(name)).findFirst()
                .orElseThrow(() -> new GradientException(mode + ": no global @" + name + " in the module"));
    }

    /** The transformation's output, typed; a type error there is a bug in the transformation or a rule, shown with the program. */
    static IRModule typed(IRModule out, String what) {
        try {
            return TypeInference.infer(out).module();
        } catch (TypeException e) {
            throw new IllegalStateException(what + " does not type-check (a bug in the transformation or a rule): " + e.getMessage()
                    + "\n" + RelayPrinter.print(out), e);
        }
    }

    static boolean isTensorTree(Type t) {
        return switch (t) {
            case TensorType tt -> true;
            case TupleType tu -> tu.fields().stream().allMatch(AdPrograms::isTensorTree);
            default -> false;
        };
    }

    static String at(Span span) {
        return span != null && span.isKnown() ? " at " + span : "";
    }
}
