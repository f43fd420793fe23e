package dev.parley.chat.spring.internal;

/** The request's body, or its declared content type, is not JSON; answered 415 before anything changes. */
public final class UnsupportedMediaType extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UnsupportedMediaType(String message) {
        super(message, null, false, false);
    }
}
