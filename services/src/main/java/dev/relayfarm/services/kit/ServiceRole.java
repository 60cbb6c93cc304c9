package dev.relayfarm.services.kit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Conditional;

/**
 * Registers a bean only in processes that run this role. One application holds every service; the property
 * {@code relayfarm.roles} (comma-separated: gateway, importer, type-inference, optimizer, autotuner, codegen,
 * or {@code all}, the default) picks which run here — all of them in the local farm, one per container in
 * docker-compose, one restarted alone in the e2e kill test.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Conditional(RoleCondition.class)
public @interface ServiceRole {
    String value();
}
