package dev.parley.chat.spring.internal.agui;

import dev.parley.chat.spring.internal.OriginCheck;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.regex.Pattern;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * CORS for the CopilotKit endpoint, so that a page on another origin calls it directly: for an origin in
 * {@code parley.web.copilotkit.allowed-origins} (exact origins only), a preflight of {@code GET} or
 * {@code POST} is answered {@code 204} with that origin, credentials allowed, and the headers it asks for (the
 * page's {@code content-type} and its own headers, such as {@code authorization}); every other answer to it
 * carries the origin and credentials too. A request from any other origin passes without CORS headers, so
 * that the browser refuses it (a preflight is then answered by whatever else the host has, which allows
 * nothing unless the host configured CORS itself).
 *
 * <p>It runs before the host's security filters: a preflight carries no credentials and does nothing, and
 * the page must be able to read a {@code 401} of its own. Immutable, thread-safe.
 */
public final class CopilotKitCors extends OncePerRequestFilter {
    /** An {@code Access-Control-Request-Headers} value: header names separated by commas. */
    private static final Pattern HEADER_LIST = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+(\\s*,\\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*");

    private final OriginCheck allowed;

    /** @param allowed the origins whose pages may call the endpoint */
    public CopilotKitCors(OriginCheck allowed) {
        this.allowed = allowed;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String origin = request.getHeader("Origin");
        if (allowed.allowsAny()) {
            response.addHeader("Vary", "Origin");
        }
        if (origin == null || !allowed.allows(origin)) {
            chain.doFilter(request, response);
            return;
        }
        String method = request.getHeader("Access-Control-Request-Method");
        boolean preflight = "OPTIONS".equals(request.getMethod()) && method != null;
        if (preflight && !(method.equals("GET") || method.equals("POST"))) {
            chain.doFilter(request, response);
            return;
        }
        response.setHeader("Access-Control-Allow-Origin", origin.strip());
        response.setHeader("Access-Control-Allow-Credentials", "true");
        if (!preflight) {
            chain.doFilter(request, response);
            return;
        }
        response.addHeader("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers");
        response.setHeader("Access-Control-Allow-Methods", "GET, POST");
        String headers = request.getHeader("Access-Control-Request-Headers");
        if (headers != null && HEADER_LIST.matcher(headers.strip()).matches()) {
            response.setHeader("Access-Control-Allow-Headers", headers.strip());
        }
        response.setHeader("Access-Control-Max-Age", "600");
        response.setStatus(HttpServletResponse.SC_NO_CONTENT);
    }
}
