package dev.parley.simulator.internal;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/** The simulator's routes (protocol section 2): which one a path names, and the method it takes. Stateless. */
public final class Routes {
    /** What a request path names. */
    public enum Name {
        HEALTH("GET"), RUN("POST"), STATUS("GET"), EVENTS("GET"), CLARIFY("POST"), CANCEL("POST"),
        TOOL_RESULT("POST"), APPROVAL("POST"), EXPIRE("POST"), FORGET_THREAD("DELETE");

        private final String method;

        Name(String method) {
            this.method = method;
        }

        /** The one method the route takes; any other is {@code 405}. */
        public String method() {
            return method;
        }
    }

    /**
     * A matched route.
     *
     * @param id the decoded run id or thread id of the path, or null for a route without one
     */
    public record Route(Name name, String id) {
    }

    private Routes() {
    }

    /**
     * The route a raw (still percent-encoded) path names, or null for none. Ids are single path segments,
     * percent-decoded as UTF-8 ({@code %2F} is a {@code /} inside an id; {@code +} stays a plus).
     */
    public static Route match(String rawPath) {
        if (rawPath == null || !rawPath.startsWith("/")) {
            return null;
        }
        String[] parts = rawPath.substring(1).split("/", -1);
        for (String part : parts) {
            if (part.isEmpty()) {
                return null;
            }
        }
        if (parts.length == 1 && parts[0].equals("health")) {
            return new Route(Name.HEALTH, null);
        }
        if (parts.length == 1 && parts[0].equals("run")) {
            return new Route(Name.RUN, null);
        }
        if (parts.length == 2 && parts[0].equals("threads")) {
            return new Route(Name.FORGET_THREAD, decode(parts[1]));
        }
        if (parts.length < 2 || !parts[0].equals("runs")) {
            return null;
        }
        String runId = decode(parts[1]);
        if (parts.length == 2) {
            return new Route(Name.STATUS, runId);
        }
        if (parts.length == 4) {
            return parts[2].equals("approval") && parts[3].equals("expire") ? new Route(Name.EXPIRE, runId) : null;
        }
        switch (parts.length == 3 ? parts[2] : "") {
            case "events":
                return new Route(Name.EVENTS, runId);
            case "clarify":
                return new Route(Name.CLARIFY, runId);
            case "cancel":
                return new Route(Name.CANCEL, runId);
            case "tool-result":
                return new Route(Name.TOOL_RESULT, runId);
            case "approval":
                return new Route(Name.APPROVAL, runId);
            default:
                return null;
        }
    }

    private static String decode(String segment) {
        return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
