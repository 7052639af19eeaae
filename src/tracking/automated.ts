// Telling automated opens and clicks from people's (docs/mail.md §6). Nothing here is certain, so
// nothing is dropped: the event is sent as Resend sends it, and metrics keep these hits apart so
// `unique_opened` and `unique_clicked` are not inflated. Signals, checked in this order:
//   - no User-Agent at all: no mail client or browser omits it;
//   - Apple Mail Privacy Protection: Apple's proxy fetches every image of a message on arrival
//     with the bare User-Agent "Mozilla/5.0" (nothing after it);
//   - image proxies that fetch on the user's behalf: Gmail (GoogleImageProxy), Yahoo (YahooMailProxy);
//   - link scanners and previewers announcing themselves (security gateways, chat unfurlers, HTTP
//     libraries, headless browsers);
//   - timing: a hit within `tracking.prefetch_window` of the delivery — scanners and prefetchers
//     fetch on arrival, people take longer;
//   - a HEAD request: a person's click is a GET.

export type AutomatedReason = 'no_user_agent' | 'apple_privacy_proxy' | 'image_proxy' | 'scanner' | 'prefetch' | 'head_request';

export interface Hit {
  method: string;
  userAgent: string;
  /** When the message was delivered (ms), if known. */
  deliveredAt: number | null;
  now: number;
}

const IMAGE_PROXY = /GoogleImageProxy|ggpht\.com|YahooMailProxy/i;
const SCANNER =
  /bot\b|bot\/|crawler|spider|scanner|preview|headless|python-requests|python-urllib|aiohttp|curl\/|wget\/|go-http-client|java\/|okhttp|libwww|httpclient|axios\/|node-fetch|undici|barracuda|mimecast|proofpoint|symantec|messagelabs|trendmicro|forcepoint|fortiguard|sophos|cisco|ironport|safelinks|facebookexternalhit|slackbot|linkexpanding|discordbot|telegrambot|whatsapp|skypeuripreview/i;

export function automatedReason(hit: Hit, prefetchWindowMs: number): AutomatedReason | null {
  const ua = hit.userAgent.trim();
  if (ua === '') return 'no_user_agent';
  if (ua === 'Mozilla/5.0') return 'apple_privacy_proxy';
  if (IMAGE_PROXY.test(ua)) return 'image_proxy';
  if (SCANNER.test(ua)) return 'scanner';
  if (hit.method === 'HEAD') return 'head_request';
  if (prefetchWindowMs > 0 && hit.deliveredAt !== null && hit.now - hit.deliveredAt < prefetchWindowMs) return 'prefetch';
  return null;
}
