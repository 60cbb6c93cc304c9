package dev.relayfarm.services.gateway;

/** The numeric ids in paths (schedules, tuning runs): anything but a positive integer is a 400, not a 404. */
public final class PathIds {
    private PathIds() {}

    public static long parse(String what, String text) {
        try {
            long id = Long.parseLong(text);
            if (id > 0) return id;
        } catch (NumberFormatException e) {
            // reported below with the text as given
        }
        throw new ApiProblem(ProblemType.BAD_ID, "not a " + what + " id: '" + text + "' (expected a positive integer)");
    }
}
