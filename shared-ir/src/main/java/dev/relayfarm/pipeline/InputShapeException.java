package dev.relayfarm.pipeline;

/** Input shapes that break a rule of {@link InputShapes}; {@link #problem()} says which, for callers that word it their own way. */
public final class InputShapeException extends ModelInputException {
    private final transient ShapeProblem problem;

    InputShapeException(ShapeProblem problem, String source) {
        super("invalid-shapes", problem.message(source));
        this.problem = problem;
    }

    public ShapeProblem problem() {
        return problem;
    }
}
