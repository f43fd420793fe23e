package dev.parley.chat.spring.internal;

/** A browser sent a state-changing request from an origin the host does not allow; answered 403. */
public final class CrossOrigin extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CrossOrigin(String origin) {
        super("requests from origin " + origin + " may not change anything here; a host that serves a page on "
                + "that origin adds it to parley.web.allowed-origins", null, false, false);
    }
}
