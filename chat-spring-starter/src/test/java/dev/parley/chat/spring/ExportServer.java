package dev.parley.chat.spring;

import org.springframework.boot.SpringApplication;

/** {@link TestApplication} as a program, for tests that run the server in a JVM of its own (a small heap, say). */
public final class ExportServer {
    private ExportServer() {
    }

    public static void main(String[] args) {
        SpringApplication.run(TestApplication.class, args);
    }
}
