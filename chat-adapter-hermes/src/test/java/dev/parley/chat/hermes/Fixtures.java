package dev.parley.chat.hermes;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Recorded peer traffic under the test resources ({@code api-server/…}, {@code bridge/…}); needs no WireMock. */
final class Fixtures {
    private Fixtures() {
    }

    /** The fixture's text; IllegalArgumentException when there is none of that name. */
    static String text(String name) {
        try (InputStream in = Fixtures.class.getResourceAsStream("/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
