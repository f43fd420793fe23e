package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.spring.OwnerResolver;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * What Parley's controllers share: every endpoint starts with {@link #owner} (a state-changing request from
 * another origin is refused, then a body that is not JSON, then the caller is found), and every error is
 * answered as an RFC 9457 problem carrying the error code.
 */
public abstract class ParleyEndpoints {
    private static final Logger log = LoggerFactory.getLogger(ParleyEndpoints.class);

    private final OwnerResolver owners;
    private final OriginCheck origins;

    protected ParleyEndpoints(OwnerResolver owners, OriginCheck origins) {
        this.owners = owners;
        this.origins = origins;
    }

    /**
     * The caller of this request, after refusing a state-changing request from another origin and a body
     * that is not declared JSON.
     *
     * @throws CrossOrigin for a state-changing request from an origin that is neither its own nor allowed
     * @throws UnsupportedMediaType for a body that is not JSON
     * @throws Unauthenticated when the request names no caller
     */
    protected String owner(HttpServletRequest request) {
        return owner(request, owners, origins);
    }

    /**
     * The caller of {@code request} as {@code owners} finds it, after the Origin rule of {@code origins} and the
     * JSON rule: the one way every Parley endpoint finds its caller.
     *
     * @throws CrossOrigin for a state-changing request from an origin that is neither its own nor allowed
     * @throws UnsupportedMediaType for a body that is not JSON
     * @throws Unauthenticated when the request names no caller
     */
    public static String owner(HttpServletRequest request, OwnerResolver owners, OriginCheck origins) {
        origins.check(request);
        JsonBodies.refuseNonJson(request);
        String owner = owners.ownerOf(request);
        if (owner == null || owner.isBlank()) {
            throw new Unauthenticated();
        }
        return owner;
    }

    /**
     * The caller of a request whose body is a file (an upload), after the Origin rule: the JSON rule does not
     * apply, so the Origin rule alone keeps other sites' pages out.
     *
     * @throws CrossOrigin for a state-changing request from an origin that is neither its own nor allowed
     * @throws Unauthenticated when the request names no caller
     */
    protected String ownerOfUpload(HttpServletRequest request) {
        origins.check(request);
        String owner = owners.ownerOf(request);
        if (owner == null || owner.isBlank()) {
            throw new Unauthenticated();
        }
        return owner;
    }

    @ExceptionHandler(ChatException.class)
    public ResponseEntity<byte[]> chatError(ChatException e, HttpServletRequest request) {
        if (Problems.status(e.code()).is5xxServerError()) {
            log.warn("{} {} failed: {}", request.getMethod(), request.getRequestURI(), e.getMessage(), e);
        }
        return Problems.of(e, request.getRequestURI());
    }

    @ExceptionHandler(Unauthenticated.class)
    public ResponseEntity<byte[]> unauthenticated(HttpServletRequest request) {
        return Problems.of(HttpStatus.UNAUTHORIZED, "UNAUTHENTICATED", "the request names no caller",
                request.getRequestURI());
    }

    @ExceptionHandler(CrossOrigin.class)
    public ResponseEntity<byte[]> crossOrigin(CrossOrigin e, HttpServletRequest request) {
        return Problems.of(HttpStatus.FORBIDDEN, "CROSS_ORIGIN", e.getMessage(), request.getRequestURI());
    }

    @ExceptionHandler(UnsupportedMediaType.class)
    public ResponseEntity<byte[]> unsupportedMediaType(UnsupportedMediaType e, HttpServletRequest request) {
        ResponseEntity<byte[]> problem = Problems.of(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE",
                e.getMessage(), request.getRequestURI());
        return ResponseEntity.status(problem.getStatusCode()).headers(problem.getHeaders())
                .header(HttpHeaders.ACCEPT, MediaType.APPLICATION_JSON_VALUE).body(problem.getBody());
    }

    @ExceptionHandler(RuntimeException.class)
    public ResponseEntity<byte[]> unexpected(RuntimeException e, HttpServletRequest request) {
        log.error("{} {} failed", request.getMethod(), request.getRequestURI(), e);
        return Problems.of(HttpStatus.INTERNAL_SERVER_ERROR, "INTERNAL", "an unexpected error occurred",
                request.getRequestURI());
    }
}
