package dev.parley.example.managed;

import dev.parley.example.ExampleApplication;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import org.junit.jupiter.api.AfterAll;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The example app on PostgreSQL (a fresh embedded server), with Spring Boot's driver, pool and Flyway. */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ExampleOnPostgresTest extends ExampleOnSimulatorContract {
    private static EmbeddedPostgres postgres;

    @DynamicPropertySource
    static void freshDatabase(DynamicPropertyRegistry registry) throws IOException {
        postgres = EmbeddedPostgres.builder().start();
        registry.add("spring.datasource.url", () -> postgres.getJdbcUrl("postgres", "postgres"));
    }

    @AfterAll
    static void stopDatabase() throws IOException {
        postgres.close();
    }
}
