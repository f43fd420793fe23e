package dev.parley.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The example host: a Spring Boot app that adds Parley's starter and a chat page. By default it keeps
 * conversations in a SQLite file and talks to the Bridge simulator it starts itself, so it runs offline;
 * set {@code parley.hermes.base-url} to talk to a real Hermes Bridge or API server instead.
 */
@SpringBootApplication
public class ExampleApplication {
    public static void main(String[] args) {
        SpringApplication.run(ExampleApplication.class, args);
    }
}
