package dev.parley.chat.spring.internal;

/** The request names no owner; answered 401. */
public final class Unauthenticated extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Unauthenticated() {
        super("the request names no caller", null, false, false);
    }
}
