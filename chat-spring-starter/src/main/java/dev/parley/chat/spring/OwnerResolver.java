package dev.parley.chat.spring;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Finds the caller (the owner of threads) of an HTTP request. Every Parley endpoint asks it first; a
 * request without an owner is answered 401. Define a bean of this type to use your own scheme; the
 * default uses Spring Security's principal when Spring Security is present (see {@code parley.owner.mode}).
 *
 * <p>Implementations must be thread-safe and fast.
 */
@FunctionalInterface
public interface OwnerResolver {
    /** The owner's id, or null when the request has none. */
    @Nullable String ownerOf(HttpServletRequest request);
}
