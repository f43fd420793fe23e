package dev.parley.chat.spring;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Tomcat settings for hosts that hold many idle SSE streams ({@code parley.web.tomcat.*}). Each open SSE
 * stream is an open request, and Tomcat holds its full set of per-request buffers for as long as it is
 * open; these settings shrink the ones that are not a limit on what a request may carry. Unset (the
 * default), the starter changes nothing in the host's Tomcat. They apply to every connection of the
 * host's Tomcat, not only to Parley's streams; the starter's README weighs what each costs other requests.
 */
@ConfigurationProperties(prefix = "parley.web.tomcat")
public class ParleyTomcatProperties {
    /**
     * The size of Tomcat's per-connection buffers that are not header limits: the socket's read and write
     * buffers ({@code socket.appReadBufSize}, {@code socket.appWriteBufSize}; 8 KB each by default) and the
     * chunked-request trailer buffer ({@code maxTrailerSize}, 8 KB, also the most trailer bytes a chunked
     * request may carry). Smaller means more, smaller socket reads and writes.
     */
    private @Nullable DataSize connectionBufferSize;
    /**
     * The size of a response's buffer (Catalina's byte and char buffers; 8 KB each by default). A response
     * is committed once it outgrows the buffer, and {@code ServletResponse.setBufferSize} still makes it
     * larger for one response. Needs Tomcat's default protocol ({@code Http11NioProtocol}).
     */
    private @Nullable DataSize responseBufferSize;

    public @Nullable DataSize getConnectionBufferSize() {
        return connectionBufferSize;
    }

    public void setConnectionBufferSize(@Nullable DataSize connectionBufferSize) {
        this.connectionBufferSize = connectionBufferSize;
    }

    public @Nullable DataSize getResponseBufferSize() {
        return responseBufferSize;
    }

    public void setResponseBufferSize(@Nullable DataSize responseBufferSize) {
        this.responseBufferSize = responseBufferSize;
    }
}
