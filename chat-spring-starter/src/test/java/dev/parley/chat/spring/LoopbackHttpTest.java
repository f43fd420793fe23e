package dev.parley.chat.spring;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The starter's HTTP tests on one real Tomcat over loopback: {@link TestApplication}, owners from the
 * header, quick heartbeats and few servlet threads (so that streams holding none is tested). The test
 * classes carrying it share one application context.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "parley.owner.mode=HEADER",
    "parley.web.heartbeat=200ms",
    "server.tomcat.threads.max=4",
    "server.tomcat.threads.min-spare=1"
})
@interface LoopbackHttpTest {
}
