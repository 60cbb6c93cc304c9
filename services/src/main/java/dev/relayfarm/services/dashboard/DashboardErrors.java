package dev.relayfarm.services.dashboard;

import dev.relayfarm.services.gateway.ApiProblem;
import dev.relayfarm.services.gateway.BearerTokenFilter;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.ui.Model;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.context.request.async.AsyncRequestNotUsableException;
import org.springframework.web.context.request.async.AsyncRequestTimeoutException;

/**
 * What every dashboard page has: the formats ({@code fmt}), the caller ({@code caller}, for the header and for which
 * actions to offer) and the CSRF token ({@code csrf}, for the forms); and how a dashboard request fails: an HTML page
 * with the status and the same detail the API's problem would give (a 403 names the role needed and the caller's),
 * not a JSON body in a browser tab. Ordered before the API's {@code ProblemHandler}, and only for this package.
 */
@ControllerAdvice(basePackageClasses = DashboardErrors.class)
@ServiceRole(Stage.GATEWAY)
@Order(Ordered.HIGHEST_PRECEDENCE)
public class DashboardErrors {
    private static final Logger log = LoggerFactory.getLogger(DashboardErrors.class);
    @ModelAttribute
    void common(HttpServletRequest request, Model model) {
        model.addAllAttributes(PageModel.common(request));
    }

    @ExceptionHandler(ApiProblem.class)
    String problem(ApiProblem e, HttpServletRequest request, HttpServletResponse response, Model model) {
        if (response.isCommitted()) return null;
        response.setStatus(e.type().status.value());
        common(request, model);
        model.addAttribute("status", e.type().status.value());
        model.addAttribute("title", e.type().title);
        model.addAttribute("detail", e.getMessage());
        return "ui/error";
    }

    @ExceptionHandler(Exception.class)
    String internal(Exception e, HttpServletRequest request, HttpServletResponse response, Model model) {
        // an event stream that already started (its client went away, its time ran out) has nothing left to answer
        if (response.isCommitted() || e instanceof AsyncRequestTimeoutException || e instanceof AsyncRequestNotUsableException) return null;
        if (e instanceof ErrorResponse refused) {
            // Spring MVC's own refusals (a missing parameter, a wrong method, ...): their status and detail, as a page
            response.setStatus(refused.getStatusCode().value());
            common(request, model);
            model.addAttribute("status", refused.getStatusCode().value());
            model.addAttribute("title", refused.getBody().getTitle());
            model.addAttribute("detail", refused.getBody().getDetail());
            return "ui/error";
        }
        log.error("dashboard request {} failed", BearerTokenFilter.path(request), e);
        response.setStatus(500);
        common(request, model);
        model.addAttribute("status", 500);
        model.addAttribute("title", "Internal error");
        model.addAttribute("detail", "The page could not be rendered (" + e.getClass().getSimpleName() + "); the gateway's log has the details.");
        return "ui/error";
    }
}
