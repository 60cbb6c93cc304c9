package dev.relayfarm.e2e;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Hands test classes the one {@link E2eFarm} of this JVM: started by the first class that asks (15-25 s on a
 * small machine), kept in the root store so JUnit closes it after the last test.
 */
public final class E2eFarmExtension implements ParameterResolver {
    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext ctx) {
        return p.getParameter().getType() == E2eFarm.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext ctx) {
        return ctx.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(E2eFarm.class, k -> E2eFarm.start(), E2eFarm.class);
    }
}
