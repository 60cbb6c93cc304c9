package dev.relayfarm.services.gateway;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The {@link Role} a gateway handler needs, on the method or on its controller (the method's wins). A caller whose
 * token lacks it gets a 403 problem naming the role and the roles it has ({@link RoleInterceptor}); a handler without
 * it needs only a valid token.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface RequiresRole {
    Role value();
}
