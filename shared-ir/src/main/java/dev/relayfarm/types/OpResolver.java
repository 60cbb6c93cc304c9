package dev.relayfarm.types;

import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.Optional;

/**
 * Where type inference looks up an operator's relation by name. The default is the operator
 * registry; tests inject their own operator definitions without registering them globally.
 */
@FunctionalInterface
public interface OpResolver {
    OpResolver REGISTRY = OpRegistry::find;

    Optional<OpDef<?>> find(String name);
}
