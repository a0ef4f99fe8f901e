/**
 * The chaos upstream's OpenAI image generation wire format (`POST …/images/generations`), typed
 * against the official SDK (`openai/resources/images`): dall-e-3's JSON reply with
 * `response_format: "b64_json"`, one 1×1 PNG whose `revised_prompt` is the answer's text (so a cut
 * or a repeat shows, as in chat). The router asks for images as JSON only; a request with `stream`
 * gets the one `image_generation.completed` event. Errors are OpenAI's, as for chat.
 */
import type { ImageGenCompletedEvent, ImagesResponse } from "openai/resources/images";
import { FAKE_PNG_BASE64 } from "../fixtures/fake-openai-responses.ts";
import { openaiWire } from "./chaos-openai-wire.ts";
import type { ChaosWire } from "./chaos-wire.ts";

export const imagesWire: ChaosWire = {
  format: "images",
  id: (name, index) => `img_${name}_${index}`,
  headers: openaiWire.headers,
  json(answer) {
    const reply: ImagesResponse = { created: Math.floor(Date.now() / 1000), data: [{ b64_json: FAKE_PNG_BASE64, revised_prompt: answer.deltas.join("") }] };
    return JSON.stringify(reply);
  },
  frames(answer) {
    const tokens = { input_tokens: answer.promptTokens, output_tokens: answer.deltas.length, total_tokens: answer.promptTokens + answer.deltas.length };
    const completed: ImageGenCompletedEvent = {
      type: "image_generation.completed",
      b64_json: FAKE_PNG_BASE64,
      background: "opaque",
      created_at: Math.floor(Date.now() / 1000),
      output_format: "png",
      quality: "medium",
      size: "1024x1024",
      usage: { ...tokens, input_tokens_details: { image_tokens: 0, text_tokens: answer.promptTokens } },
    };
    return [{ kind: "tail", text: `event: ${completed.type}\ndata: ${JSON.stringify(completed)}\n\n` }];
  },
  malformedFrame: () => `event: image_generation.completed\ndata: {"type":"image_generation.completed","b64_json":\n\n`,
  errorEvent: openaiWire.errorEvent,
  errorBody: openaiWire.errorBody,
  messageOf: openaiWire.messageOf,
  // Like the API: a body without a prompt is refused.
  refusal: (body) => (typeof body?.prompt === "string" ? undefined : "Missing required parameter: 'prompt'."),
};
