package dev.parley.example.managed;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The premise of this module's other tests: the libraries Parley shares with Spring Boot are the versions Spring
 * Boot's parent picks (handed in by the build), not the ones Parley is built with. Were this module ever to pin
 * Parley's versions, this test, not a silent pass of the others, would say so.
 */
class ManagedVersionsTest {

    @Test
    void theSharedLibrariesAreTheVersionsSpringBootManages() throws IOException {
        assertThat(mavenVersion("org.flywaydb", "flyway-core")).isEqualTo(managed("flyway"));
        assertThat(mavenVersion("org.xerial", "sqlite-jdbc")).isEqualTo(managed("sqlite-jdbc"));
        assertThat(mavenVersion("com.zaxxer", "HikariCP")).isEqualTo(managed("hikaricp"));
        assertThat(com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString()).isEqualTo(managed("jackson"));
        assertThat(org.postgresql.util.DriverInfo.DRIVER_VERSION).isEqualTo(managed("postgresql"));
    }

    private static String managed(String library) {
        String version = System.getProperty("boot." + library + ".version");
        assertThat(version).as("the build hands in Spring Boot's " + library + " version").isNotBlank();
        return version;
    }

    /** The version in the jar's own Maven metadata, as its build wrote it. */
    private static String mavenVersion(String groupId, String artifactId) throws IOException {
        String resource = "META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (InputStream in = ManagedVersionsTest.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        }
    }
}
