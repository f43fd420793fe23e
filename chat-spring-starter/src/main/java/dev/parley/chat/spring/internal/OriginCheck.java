package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Refuses a state-changing request ({@code POST}, {@code PUT}, {@code PATCH}, {@code DELETE}) that a browser
 * sent from another origin: its {@code Origin} header names neither the request's own origin (the scheme,
 * host and port it was sent to, as the servlet container sees them, so behind a proxy with the forwarded
 * headers applied) nor one the host allows ({@code parley.web.allowed-origins}). A request without
 * {@code Origin} passes: browsers send it on every cross-origin {@code POST}, so only other clients lack it.
 * This stops a page on another site from making a logged-in person's browser cancel, regenerate or
 * activate (which take no body, so the JSON rule of {@link JsonBodies} does not stop them) where the host
 * has no CSRF protection. Immutable, thread-safe.
 */
public final class OriginCheck {
    private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

    private final Set<String> allowed;

    /**
     * @param allowedOrigins origins besides the request's own whose pages may change things, such as
     *     {@code https://app.example.com} (scheme, host and port only)
     * @throws ChatException CONFIGURATION for an entry that is not such an origin
     */
    public OriginCheck(Collection<String> allowedOrigins) {
        this(allowedOrigins, "parley.web.allowed-origins");
    }

    /**
     * @param allowedOrigins as above
     * @param property the property that lists them, for the error
     * @throws ChatException CONFIGURATION for an entry that is not such an origin (a wildcard is not)
     */
    public OriginCheck(Collection<String> allowedOrigins, String property) {
        Set<String> origins = new HashSet<>();
        for (String origin : allowedOrigins) {
            String normalized = normalize(origin.strip());
            if (normalized == null) {
                throw ChatException.configuration(property + " holds '" + origin + "', which is not an"
                        + " origin such as https://app.example.com (a scheme, a host, a port, nothing else)");
            }
            origins.add(normalized);
        }
        this.allowed = Set.copyOf(origins);
    }

    /**
     * Passes a safe request, one without {@code Origin}, and one from its own or an allowed origin.
     *
     * @throws CrossOrigin otherwise
     */
    public void check(HttpServletRequest request) {
        if (SAFE_METHODS.contains(request.getMethod())) {
            return;
        }
        String origin = request.getHeader("Origin");
        if (origin == null) {
            return;
        }
        String normalized = normalize(origin.strip());
        if (normalized == null || !(normalized.equals(ownOrigin(request)) || allowed.contains(normalized))) {
            throw new CrossOrigin(origin);
        }
    }

    /** Whether {@code origin}, an {@code Origin} header's value, is one of the allowed origins (not merely the request's own). */
    public boolean allows(@Nullable String origin) {
        String normalized = origin == null ? null : normalize(origin.strip());
        return normalized != null && allowed.contains(normalized);
    }

    /** Whether any origin besides the request's own is allowed. */
    public boolean allowsAny() {
        return !allowed.isEmpty();
    }

    private static @Nullable String ownOrigin(HttpServletRequest request) {
        return normalize(request.getScheme(), request.getServerName(), request.getServerPort());
    }

    /** {@code scheme://host:port}, lower case, the port always given; null for anything but such an origin. */
    static @Nullable String normalize(String origin) {
        try {
            URI uri = new URI(origin);
            boolean bare = uri.getRawPath() == null || uri.getRawPath().isEmpty() || uri.getRawPath().equals("/");
            if (uri.getScheme() == null || uri.getHost() == null || !bare || uri.getRawQuery() != null
                    || uri.getRawFragment() != null || uri.getRawUserInfo() != null) {
                return null;
            }
            return normalize(uri.getScheme(), uri.getHost(), uri.getPort());
        } catch (URISyntaxException e) {
            return null;
        }
    }

    private static @Nullable String normalize(String scheme, String host, int port) {
        String s = scheme.toLowerCase(Locale.ROOT);
        int effective = port >= 0 ? port : s.equals("https") ? 443 : s.equals("http") ? 80 : -1;
        if (effective < 0) {
            return null;
        }
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        return s + "://" + h + ":" + effective;
    }
}
