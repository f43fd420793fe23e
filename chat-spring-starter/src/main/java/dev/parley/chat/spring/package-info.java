/**
 * Spring Boot auto-configuration for Parley: the {@link dev.parley.chat.engine.ChatEngine}, the REST + SSE
 * endpoints, helpers for hosts with their own controllers, and the browser client served at
 * {@code /parley/}. Properties live under {@code parley.*} ({@link dev.parley.chat.spring.ParleyProperties}).
 */
@NullMarked
package dev.parley.chat.spring;

import org.jspecify.annotations.NullMarked;
