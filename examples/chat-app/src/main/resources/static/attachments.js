// Files in the chat page: the composer's tray (attach button, drag-and-drop, paste; each file uploads at once
// with its progress, images as thumbnails, other files as chips) and how a sent message shows its files.
import { escapeHtml } from './markdown.js';

const FILE_ICON = '<svg class="file-icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8l-6-6zm-1 7V3.5L18.5 9H13z"/></svg>';

/** "1.2 MB" for a byte count. */
export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** True if `type` is one of `accepted` (`image/*` names a family). An empty type is left to the server to tell. */
export function acceptsType(accepted, type) {
  if (!type) return true;
  const lower = type.toLowerCase();
  return accepted.some((t) => t === lower || t === '*/*' || (t.endsWith('/*') && lower.startsWith(t.slice(0, -1))));
}

/** The files of a sent message: images as thumbnails, other files as chips; each opens in a new tab. */
export function renderMessageFiles(attachments, urlOf) {
  if (!attachments?.length) return '';
  const items = attachments.map((file) => {
    const url = escapeHtml(urlOf(file.id));
    const name = escapeHtml(file.name ?? 'file');
    if (file.mediaType?.startsWith('image/')) {
      return `<a class="message-file image" href="${url}" target="_blank" rel="noopener" title="${name}">`
        + `<img class="thumb" src="${url}" alt="${name}" loading="lazy"></a>`;
    }
    return `<a class="message-file chip" href="${url}" target="_blank" rel="noopener" title="Open ${name}">`
      + `${FILE_ICON}<span class="file-name">${name}</span>`
      + `<span class="file-size">${formatSize(file.size ?? 0)}</span></a>`;
  });
  return `<div class="message-files">${items.join('')}</div>`;
}

/**
 * The files being attached to the next message. Each uploads as soon as it is added (to the session that
 * `ensureSession()` resolves to); `ids()` are the uploaded ones, `busy()` says whether any is still going.
 * What the server's limits refuse is never uploaded; what the server refuses shows on its chip.
 */
export class ComposerFiles {
  constructor({ client, tray, fileInput, button, ensureSession, onChange = () => {}, onError = () => {} }) {
    Object.assign(this, { client, tray, fileInput, button, ensureSession, onChange, onError });
    this.items = [];
    this.limits = null;
    this.nextKey = 1;
    fileInput.addEventListener('change', () => {
      this.add([...fileInput.files]);
      fileInput.value = '';
    });
    button.addEventListener('click', () => fileInput.click());
    tray.addEventListener('click', (e) => {
      const remove = e.target.closest('[data-remove]');
      if (remove) this.remove(Number(remove.dataset.remove));
    });
  }

  /** Takes the server's limits (`attachmentLimits()`); the button shows only when something can be attached. */
  setLimits(limits) {
    this.limits = limits;
    const accepted = limits?.acceptedTypes ?? [];
    this.button.hidden = accepted.length === 0;
    this.fileInput.accept = accepted.join(',');
  }

  get enabled() {
    return (this.limits?.acceptedTypes?.length ?? 0) > 0;
  }

  /** Adds files (from the button, a drop or a paste) and starts their uploads. */
  add(files) {
    if (!this.enabled) {
      if (files.length) this.onError(new Error('This runtime takes no files.'));
      return;
    }
    for (const file of files) {
      const refusal = this.refusal(file);
      if (refusal) {
        this.onError(new Error(refusal));
        continue;
      }
      const item = {
        key: this.nextKey++, file, name: file.name || 'pasted file', size: file.size, type: file.type,
        preview: file.type.startsWith('image/') ? URL.createObjectURL(file) : null,
        sent: 0, attachment: null, error: null, controller: new AbortController(),
      };
      this.items.push(item);
      item.upload = this.upload(item);
    }
    this.render();
  }

  refusal(file) {
    const { acceptedTypes, maxFileBytes, maxFilesPerMessage } = this.limits;
    if (!acceptsType(acceptedTypes, file.type)) return `${file.name}: files of type ${file.type} cannot be attached here.`;
    if (file.size > maxFileBytes) return `${file.name} is ${formatSize(file.size)}; the limit is ${formatSize(maxFileBytes)} per file.`;
    if (file.size === 0) return `${file.name} is empty.`;
    if (this.items.length >= maxFilesPerMessage) return `At most ${maxFilesPerMessage} files go with one message.`;
    return null;
  }

  async upload(item) {
    try {
      const sessionId = await this.ensureSession();
      item.attachment = await this.client.uploadAttachment(sessionId, item.file, {
        name: item.name,
        signal: item.controller.signal,
        onProgress: (sent) => { item.sent = sent; this.render(); },
      });
    } catch (e) {
      if (item.controller.signal.aborted) return;
      item.error = e?.message ?? String(e);
    }
    this.render();
  }

  remove(key) {
    const item = this.items.find((i) => i.key === key);
    if (!item) return;
    item.controller.abort();
    if (item.preview) URL.revokeObjectURL(item.preview);
    this.items = this.items.filter((i) => i !== item);
    this.render();
  }

  /** The ids of the uploaded files, in the order they were added. */
  ids() {
    return this.items.filter((i) => i.attachment).map((i) => i.attachment.id);
  }

  /** True while a file is still uploading. */
  busy() {
    return this.items.some((i) => !i.attachment && !i.error);
  }

  /** True if a file could not be uploaded (it must be removed before sending). */
  failed() {
    return this.items.some((i) => i.error);
  }

  /** Empties the tray after a send; the uploads belong to the sent message now. */
  clear() {
    for (const item of this.items) if (item.preview) URL.revokeObjectURL(item.preview);
    this.items = [];
    this.render();
  }

  render() {
    this.tray.hidden = this.items.length === 0;
    this.tray.innerHTML = this.items.map((item) => {
      const state = item.error ? 'failed' : item.attachment ? 'done' : 'uploading';
      const visual = item.preview
        ? `<img class="thumb" src="${escapeHtml(item.preview)}" alt="${escapeHtml(item.name)}">`
        : FILE_ICON;
      const status = item.error
        ? `<span class="file-error">${escapeHtml(item.error)}</span>`
        : item.attachment
          ? `<span class="file-size">${formatSize(item.attachment.size)}</span>`
          : `<progress max="${item.size}" value="${item.sent}"></progress>`;
      return `<div class="composer-file ${state}" data-key="${item.key}" data-state="${state}">${visual}
        <span class="file-name" title="${escapeHtml(item.name)}">${escapeHtml(item.name)}</span>${status}
        <button type="button" class="remove-file" data-remove="${item.key}" title="Remove ${escapeHtml(item.name)}">×</button></div>`;
    }).join('');
    this.onChange();
  }
}

/** Lets files be dropped anywhere on `zone`: it shows a drop hint while files are dragged over it. */
export function acceptDrops(zone, files) {
  let depth = 0;
  const carriesFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  zone.addEventListener('dragenter', (e) => {
    if (!carriesFiles(e) || !files.enabled) return;
    depth++;
    zone.classList.add('dropping');
  });
  zone.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) zone.classList.remove('dropping');
  });
  zone.addEventListener('dragover', (e) => {
    if (carriesFiles(e) && files.enabled) e.preventDefault();
  });
  zone.addEventListener('drop', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    depth = 0;
    zone.classList.remove('dropping');
    files.add([...e.dataTransfer.files]);
  });
}
