/**
 * How stored completions and their messages look on the wire (docs/interface.md, "Stored completions": chat
 * completion object, stored chat completion message list item, delete result).
 */
import type { StoredCompletion } from "../plugin.ts";
import type { ChatMessage, ContentPart } from "../types/chat.ts";

/** The completion as the API returns it: the reply, plus its metadata. */
export function completionView(entry: StoredCompletion) {
  return { ...entry.completion, metadata: entry.metadata };
}

export interface StoredMessageView {
  id: string;
  role: string;
  content: string | null;
  content_parts: Array<{ type: "input_text"; text: string } | { type: "input_image"; image_url: string }>;
  name: string | null;
  [extra: string]: unknown;
}

function partsOf(content: ChatMessage["content"]): StoredMessageView["content_parts"] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: ContentPart): StoredMessageView["content_parts"] => {
    if (part.type === "text" && typeof part.text === "string") return [{ type: "input_text", text: part.text }];
    if (part.type === "image_url" && typeof part.image_url === "object" && part.image_url) {
      return [{ type: "input_image", image_url: (part.image_url as { url: string }).url }];
    }
    return [];
  });
}

/** A request message as a messages-list item; its id is `<completion id>-<position>`. */
export function messageView(completionId: string, message: ChatMessage, index: number): StoredMessageView {
  const parts = partsOf(message.content);
  const text = parts.flatMap((p) => (p.type === "input_text" ? [p.text] : []));
  return {
    id: `${completionId}-${index}`,
    role: message.role,
    content: text.length > 0 ? text.join("\n") : null,
    content_parts: parts,
    name: message.name ?? null,
    ...(message.tool_calls && { tool_calls: message.tool_calls }),
    ...(message.tool_call_id && { tool_call_id: message.tool_call_id }),
  };
}
