package dev.parley.bench.web;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * The host application of the web measurements: nothing but Spring Boot's auto-configuration, which
 * brings Tomcat, Spring MVC and Parley's starter (its engine, REST + SSE endpoints and heartbeats). The
 * runtime and the store are given as beans by {@link SpringHost}. No component scan.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class BenchWebApp {
}
