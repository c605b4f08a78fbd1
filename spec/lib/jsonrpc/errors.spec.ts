import { describe, expect, it } from 'vitest'
import {
  ErrorCode, InternalError, InvalidParamsError, InvalidRequestError, McpError, MethodNotFoundError, ParseError,
  ResourceNotFoundError, TimeoutError, UrlElicitationRequiredError, CancelledError, ConnectionClosedError,
  TransportError, FrameTooLargeError, CapabilityError, ProtocolError, UnsupportedVersionError,
} from '../../../lib/jsonrpc/errors.ts'

/** A URL elicitation as a -32042 lists it. */
const URL_ELICITATION = { mode: 'url', elicitationId: 'e-1', url: 'https://example.com/connect', message: 'Connect' }

describe('McpError', () => {
  it.each([
    [ErrorCode.ParseError, ParseError],
    [ErrorCode.InvalidRequest, InvalidRequestError],
    [ErrorCode.MethodNotFound, MethodNotFoundError],
    [ErrorCode.InvalidParams, InvalidParamsError],
    [ErrorCode.InternalError, InternalError],
    [ErrorCode.ResourceNotFound, ResourceNotFoundError],
    [ErrorCode.UrlElicitationRequired, UrlElicitationRequiredError],
  ])('rebuilds code %i as its subclass with message and data', (code, kind) => {
    // -32042's data lists its URL elicitations (MCP 2025-11-25); the other codes' data is free.
    const data = code === ErrorCode.UrlElicitationRequired ? { elicitations: [URL_ELICITATION], d: 1 } : { d: 1 }
    const error = McpError.from({ code, message: 'm', data })
    expect(error).toBeInstanceOf(kind)
    expect(error).toBeInstanceOf(McpError)
    expect(error.toJSON()).toEqual({ code, message: 'm', data })
  })

  it('keeps unknown codes as a plain McpError and omits absent data', () => {
    const error = McpError.from({ code: -1, message: 'custom' })
    expect(error.constructor).toBe(McpError)
    expect(error.toJSON()).toEqual({ code: -1, message: 'custom' })
  })
})

describe('local errors', () => {
  it.each([
    [new TimeoutError(), 'TimeoutError', 'RXMCP_ERR_TIMEOUT'],
    [new CancelledError(), 'CancelledError', 'RXMCP_ERR_CANCELLED'],
    [new ConnectionClosedError(), 'ConnectionClosedError', 'RXMCP_ERR_CONNECTION_CLOSED'],
    [new TransportError(), 'TransportError', 'RXMCP_ERR_TRANSPORT'],
    [new FrameTooLargeError(10), 'FrameTooLargeError', 'RXMCP_ERR_FRAME_TOO_LARGE'],
    [new CapabilityError('x'), 'CapabilityError', 'RXMCP_ERR_CAPABILITY'],
    [new ProtocolError('x'), 'ProtocolError', 'RXMCP_ERR_PROTOCOL'],
    [new UnsupportedVersionError('1', ['2']), 'UnsupportedVersionError', 'RXMCP_ERR_UNSUPPORTED_VERSION'],
  ])('%o has name and code', (error, name, code) => {
    expect(error.name).toBe(name)
    expect(error.code).toBe(code)
    expect(error).not.toBeInstanceOf(McpError)
  })

  it('keeps the cause', () => {
    const cause = new Error('root')
    expect(new TransportError('failed', { cause }).cause).toBe(cause)
  })
})
