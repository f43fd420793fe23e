package dev.parley.example.managed;

import dev.parley.example.ExampleApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The example app as it starts by default, on a SQLite file, under Spring Boot's versions. */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ExampleOnSqliteTest extends ExampleOnSimulatorContract {

    @DynamicPropertySource
    static void freshDatabase(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:sqlite:target/boot-managed-" + System.nanoTime() + ".db");
    }
}
