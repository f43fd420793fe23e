package dev.parley.chat.spring.internal.tomcat;

import org.apache.coyote.http11.Http11NioProtocol;

/**
 * Tomcat's NIO HTTP/1.1 protocol with a chosen response buffer size: Tomcat sizes each response's byte and
 * char buffers by {@link #getDesiredBufferSize()}, which is otherwise fixed at 8 KB for HTTP/1.1. Tomcat
 * creates the protocol by its class name, so the size is set after creation, before the connector starts.
 */
public class SizedBufferHttp11NioProtocol extends Http11NioProtocol {
    private volatile int responseBufferSize = -1;

    /** @param bytes the response buffer size, in bytes; -1 for Tomcat's default */
    public void setResponseBufferSize(int bytes) {
        this.responseBufferSize = bytes;
    }

    @Override
    public int getDesiredBufferSize() {
        return responseBufferSize;
    }
}
