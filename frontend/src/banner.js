// Banners under the toolbar: conflicts, restored edits, failures. One per key, so a repeated
// problem updates its banner instead of stacking copies.

import { h } from "./dom.js";

export class Banners {
  constructor() {
    this.el = h("div.banners", { dataset: { role: "banners" } });
    this.byKey = new Map();
  }

  // actions: [[label, onClick, name?]]; tone: "error" | "warning" | "info".
  show(key, message, actions = [], tone = "error") {
    const buttons = actions.map(([label, onClick, name]) => {
      const b = h("button", { type: "button", text: label, dataset: { bannerAction: name || label } });
      b.addEventListener("click", onClick);
      return b;
    });
    const close = h("button.close", { type: "button", text: "×", title: "Dismiss" });
    close.addEventListener("click", () => this.hide(key));
    const banner = h(`div.banner.${tone}`, { dataset: { banner: key }, role: "alert" },
      h("span.banner-text", { text: message }), ...buttons, key === "conflict" ? null : close);
    const old = this.byKey.get(key);
    if (old) old.replaceWith(banner);
    else this.el.append(banner);
    this.byKey.set(key, banner);
  }

  hide(key) {
    this.byKey.get(key)?.remove();
    this.byKey.delete(key);
  }
}
