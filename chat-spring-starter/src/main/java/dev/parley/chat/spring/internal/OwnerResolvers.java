package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.spring.OwnerResolver;
import dev.parley.chat.spring.ParleyProperties;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.ClassUtils;

/** The built-in owner resolvers and the choice between them. */
public final class OwnerResolvers {
    private static final Logger log = LoggerFactory.getLogger(OwnerResolvers.class);
    private static final String SECURITY_CONTEXT = "org.springframework.security.core.context.SecurityContextHolder";

    private OwnerResolvers() {
    }

    /**
     * The resolver the properties ask for (see {@link ParleyProperties.Owner#getMode()}). AUTO never falls
     * back to the header: anyone can send it, so only an explicit HEADER trusts it.
     *
     * @throws OwnerModeNotChosen in AUTO mode without Spring Security and without a fixed owner
     * @throws IllegalStateException for SECURITY without Spring Security, or FIXED without a fixed owner
     */
    public static OwnerResolver fromProperties(ParleyProperties.Owner owner, @Nullable ClassLoader classLoader) {
        boolean securityPresent = ClassUtils.isPresent(SECURITY_CONTEXT, classLoader);
        switch (owner.getMode()) {
            case SECURITY:
                if (!securityPresent) {
                    throw ChatException.configuration("parley.owner.mode=SECURITY needs Spring Security on the classpath");
                }
                return SecurityOwner.resolver();
            case FIXED:
                return fixed(owner.getFixed());
            case HEADER:
                return header(owner.getHeader());
            default:
                if (securityPresent) {
                    return SecurityOwner.resolver();
                }
                if (owner.getFixed() != null && !owner.getFixed().isBlank()) {
                    return fixed(owner.getFixed());
                }
                throw new OwnerModeNotChosen(owner.getHeader());
        }
    }

    private static OwnerResolver fixed(@Nullable String ownerId) {
        if (ownerId == null || ownerId.isBlank()) {
            throw ChatException.configuration("parley.owner.mode=FIXED needs parley.owner.fixed");
        }
        log.warn("Parley: every request is owned by the fixed owner '{}' (parley.owner.fixed). "
                + "Fine for a demo, unsafe in production: every caller sees every conversation.", ownerId);
        return request -> ownerId;
    }

    private static OwnerResolver header(String name) {
        log.warn("Parley: the owner of a request is taken from the {} header. Anyone can send that header: "
                + "use this only behind a proxy that sets it, or add Spring Security.", name);
        return new HeaderOwner(name);
    }

    /**
     * Whether {@code resolver} is the built-in one of {@code parley.owner.mode=HEADER}, which believes a header
     * any caller can set. Endpoints that a page on another origin calls directly refuse it unless the host
     * says a proxy sets the header. A host's own resolver is the host's decision and is never refused.
     */
    public static boolean trustsHeader(OwnerResolver resolver) {
        return resolver instanceof HeaderOwner;
    }

    /** The owner named by a request header: only safe behind a proxy that sets it. */
    private static final class HeaderOwner implements OwnerResolver {
        private final String name;

        HeaderOwner(String name) {
            this.name = name;
        }

        @Override
        public @Nullable String ownerOf(HttpServletRequest request) {
            String value = request.getHeader(name);
            return value == null || value.isBlank() ? null : value.strip();
        }
    }

    /** Kept apart so that Spring Security's classes are only loaded when present. */
    private static final class SecurityOwner {
        static OwnerResolver resolver() {
            return (HttpServletRequest request) -> {
                org.springframework.security.core.Authentication authentication =
                        org.springframework.security.core.context.SecurityContextHolder.getContext().getAuthentication();
                if (authentication == null || !authentication.isAuthenticated()
                        || authentication instanceof org.springframework.security.authentication.AnonymousAuthenticationToken) {
                    return null;
                }
                return authentication.getName();
            };
        }
    }
}
