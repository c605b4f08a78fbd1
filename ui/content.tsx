/**
 * Results by content type: text, image, audio, embedded and linked resources, and structured
 * content beside the tool's outputSchema.
 */
import type { JSX } from 'preact'

/** One content block (tool results, prompt messages, sampling). */
export function ContentBlock(props: { block: any; onOpen?: (uri: string) => void }): JSX.Element {
  const block = props.block ?? {}
  switch (block.type) {
    case 'text': return <pre class="content text">{block.text}</pre>
    case 'image': return <img class="content image" alt="image result" src={`data:${block.mimeType};base64,${block.data}`} />
    case 'audio': return <audio class="content audio" controls src={`data:${block.mimeType};base64,${block.data}`} />
    case 'resource_link':
      return (
        <div class="content link">
          Link: <code>{block.uri}</code> {block.mimeType ? `(${block.mimeType})` : ''}
          {props.onOpen ? <button type="button" onClick={() => props.onOpen!(block.uri)}>Read</button> : null}
        </div>
      )
    case 'resource': return <ResourceContents contents={block.resource} />
    default: return <pre class="content json">{JSON.stringify(block, null, 2)}</pre>
  }
}

/** One item of `resources/read` contents, or an embedded resource. */
export function ResourceContents(props: { contents: any }): JSX.Element {
  const contents = props.contents ?? {}
  const head = <div class="uri"><code>{contents.uri}</code> {contents.mimeType ? `(${contents.mimeType})` : ''}</div>
  if (typeof contents.text === 'string') return <div class="content resource">{head}<pre>{contents.text}</pre></div>
  if (typeof contents.blob === 'string' && String(contents.mimeType ?? '').startsWith('image/')) {
    return <div class="content resource">{head}<img alt={contents.uri} src={`data:${contents.mimeType};base64,${contents.blob}`} /></div>
  }
  return <div class="content resource">{head}<p class="muted">{typeof contents.blob === 'string' ? `${Math.floor(contents.blob.length * 3 / 4)} bytes` : 'no contents'}</p></div>
}

/** A tool result: its blocks, its structured content beside the outputSchema, isError marked. */
export function ToolResult(props: { result: any; outputSchema?: unknown; onOpen?: (uri: string) => void }): JSX.Element {
  const result = props.result ?? {}
  return (
    <div class={result.isError ? 'result error' : 'result'} id="result" data-is-error={String(result.isError === true)}>
      {(result.content ?? []).map((block: any, index: number) => <ContentBlock key={index} block={block} onOpen={props.onOpen} />)}
      {result.structuredContent !== undefined
        ? <div class="structured">
          <div><h4>Structured content</h4><pre id="structured">{JSON.stringify(result.structuredContent, null, 2)}</pre></div>
          {props.outputSchema !== undefined ? <div><h4>Output schema</h4><pre>{JSON.stringify(props.outputSchema, null, 2)}</pre></div> : null}
        </div>
        : null}
    </div>
  )
}
