package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Type;
import java.util.List;
import java.util.Optional;

/**
 * A target's say on the layout of one operator (TVM's {@code FTVMAlterOpLayout} /
 * {@code FTVMConvertOpLayout}): given an operator call and the checked types of its arguments and
 * result in the original program, the layouts it wants and the call that computes in them, or empty
 * to leave the call as it is. Hooks are registered per operator name in {@link AlterLayoutHooks}.
 */
@FunctionalInterface
public interface AlterLayoutHook {
    Optional<LayoutChange> alter(Call call, List<Type> argTypes, Type resultType);
}
